import type { Actor } from "../../audit/record";
import type { Env } from "../../env";
import { metaTrace } from "../../telemetry/propagation";
import type { TraceContext } from "../../telemetry/trace-context";
import type { Exposure } from "./expose";

/** What every tool and resource of one `/mcp` request works with: the tenant the key named, and its exposure. */
export interface McpContext {
  env: Env;
  tenant: string;
  exposure: Exposure;
  /** Keeps work alive past the response (`ctx.waitUntil`). */
  background: (work: Promise<unknown>) => void;
  /**
   * The trace context a run send_message starts belongs to (docs/observability.md): the `/mcp`
   * request's headers', or a tool call's own `_meta` (see {@link inCallTrace}).
   */
  trace?: TraceContext;
}

/**
 * `ctx` in the trace of one request: its `params._meta` context (MCP's own carrier, SEP-414)
 * when that is valid, preferred over the `/mcp` request's headers — it is this request's,
 * where a header may be a proxy's or the connection's — else the headers' as `ctx` has them.
 */
export function inCallTrace(ctx: McpContext, meta: Readonly<Record<string, unknown>> | undefined): McpContext {
  const trace = metaTrace(meta);
  return trace ? { ...ctx, trace } : ctx;
}

/** Who the audit trail says acted: a user, through MCP. */
export const MCP_ACTOR: Actor = { actor: "mcp", actor_type: "user" };
