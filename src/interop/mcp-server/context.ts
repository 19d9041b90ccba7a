import type { Actor } from "../../audit/record";
import type { Env } from "../../env";
import type { TraceContext } from "../../telemetry/trace-context";
import type { Exposure } from "./expose";

/** What every tool and resource of one `/mcp` request works with: the tenant the key named, and its exposure. */
export interface McpContext {
  env: Env;
  tenant: string;
  exposure: Exposure;
  /** Keeps work alive past the response (`ctx.waitUntil`). */
  background: (work: Promise<unknown>) => void;
  /** The `/mcp` request's W3C trace context: a run send_message starts belongs to it (docs/observability.md). */
  trace?: TraceContext;
}

/** Who the audit trail says acted: a user, through MCP. */
export const MCP_ACTOR: Actor = { actor: "mcp", actor_type: "user" };
