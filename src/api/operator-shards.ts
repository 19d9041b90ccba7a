import { type Context, Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../app-env";
import { assignmentView } from "../audit/shard-assignment";
import { ensureAssignment, tenantsPerShard } from "../audit/shard-store";
import { unwrap } from "../errors";
import { advanceMove, startMove } from "../services/shard-moves";
import { shardDatabases } from "../services/tenant-shards";
import { readJson } from "./validate";

/**
 * The operator's shard routes (docs/operations.md, Shards), mounted in ./operator.ts behind
 * its key: the shards and how many tenants each holds, a tenant's shard, and a move.
 */

export const ShardMoveBody = z
  .object({ shard: z.number().int().min(0).describe("The shard the tenant should be on.") })
  .strict();

export const ShardsView = z
  .object({
    shards: z.array(z.object({ shard: z.number().int(), tenants: z.number().int() })),
  })
  .describe("The shards the deployment binds (AUDIT_DB_0 on) and the tenants assigned to each.");

/** A move's next step is due when every isolate has seen its phase: the caller asks again then. */
function retryAfterS(nextStepAt: string | null): string {
  const wait = nextStepAt === null ? 1 : Math.ceil((Date.parse(nextStepAt) - Date.now()) / 1000);
  return String(Math.max(1, wait));
}

/** Routes under /v1/operator; `tenantOf` checks the tenant RELAY_API_KEYS lists. */
export function operatorShards(tenantOf: (c: Context<AppEnv>) => string) {
  return new Hono<AppEnv>()
    .get("/shards", async (c) => {
      const counts = await tenantsPerShard(c.env.DB);
      const view: z.infer<typeof ShardsView> = {
        shards: shardDatabases(c.env).map((_, shard) => ({ shard, tenants: counts.get(shard) ?? 0 })),
      };
      return c.json(view);
    })
    .get("/tenants/:tenant/shard", async (c) => {
      const tenant = tenantOf(c);
      const assignment = await ensureAssignment(c.env.DB, tenant, shardDatabases(c.env).length, Date.now());
      return c.json(assignmentView(assignment));
    })
    .put("/tenants/:tenant/shard", async (c) => {
      const tenant = tenantOf(c);
      const { shard } = await readJson(c, ShardMoveBody);
      unwrap(await startMove(c.env, tenant, shard));
      const now = (await advanceMove(c.env, tenant))!;
      const view = assignmentView(now);
      if (view.phase === "settled") return c.json(view, 200);
      return c.json(view, 202, { "Retry-After": retryAfterS(view.next_step_at) });
    });
}
