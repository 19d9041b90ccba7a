import { app } from "./app";
import { runRetention } from "./audit/archive";
import type { Env } from "./env";
import { driveMoves } from "./services/shard-moves";
import { shardDatabases } from "./services/tenant-shards";
import { type RewrapReport, rewrapVault } from "./vault/secrets";

export { AgentDO } from "../durable-objects/agent/agent";
export { CollaborationDO } from "../durable-objects/collaboration/collaboration";
export { RouterDO } from "../durable-objects/router/router";
export { SessionDO } from "../durable-objects/session/session";
export { TenantDO } from "../durable-objects/tenant/tenant";

/** Vault rows a cron run reseals at most (a rotation of a large vault takes several hours). */
const REWRAP_PASSES = 10;

/** Reseals secrets still under an older vault key, a pass of 500 at a time (docs/operations.md). */
async function rewrapOlderSecrets(env: Env): Promise<void> {
  let after: RewrapReport["next"] = null;
  for (let pass = 0; pass < REWRAP_PASSES; pass++) {
    const report = await rewrapVault(env, 500, after);
    if (report.unreadable > 0) console.error(`vault rewrap: ${report.unreadable} secrets open under no key set`);
    after = report.next;
    if (after === null) return;
  }
}

export default {
  fetch: app.fetch,
  /**
   * The cron trigger (wrangler.toml): audit records past AUDIT_RETENTION_DAYS move to the R2
   * archive, shard by shard; vault secrets sealed under an older key move to the current one;
   * a tenant's move to another shard that its operator left goes on.
   */
  scheduled(controller, env, ctx) {
    ctx.waitUntil(
      runRetention(env, shardDatabases(env), controller.scheduledTime).catch((error: unknown) => {
        // Nothing left D1 unarchived; the next run does the day again.
        console.error("audit retention run failed", error);
      }),
    );
    ctx.waitUntil(
      rewrapOlderSecrets(env).catch((error: unknown) => {
        // Every row is resealed in one statement or not at all; the next run goes on.
        console.error("vault rewrap failed", error);
      }),
    );
    ctx.waitUntil(
      driveMoves(env).catch((error: unknown) => {
        // Each step is stored before the next: the next run (or the operator) goes on from there.
        console.error("shard moves could not go on", error);
      }),
    );
  },
} satisfies ExportedHandler<Env>;
