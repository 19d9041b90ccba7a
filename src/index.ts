import { app } from "./app";
import { runRetention } from "./audit/archive";
import type { Env } from "./env";

export { AgentDO } from "../durable-objects/agent/agent";
export { CollaborationDO } from "../durable-objects/collaboration/collaboration";
export { RouterDO } from "../durable-objects/router/router";
export { SessionDO } from "../durable-objects/session/session";

export default {
  fetch: app.fetch,
  /** The cron trigger (wrangler.toml): audit records past AUDIT_RETENTION_DAYS move to the R2 archive. */
  scheduled(controller, env, ctx) {
    ctx.waitUntil(
      runRetention(env, controller.scheduledTime).catch((error: unknown) => {
        // Nothing left D1 unarchived; the next run does the day again.
        console.error("audit retention run failed", error);
      }),
    );
  },
} satisfies ExportedHandler<Env>;
