import { RelayError, unwrap } from "../../errors";
import type { SessionRpc } from "../../rpc/session";
import { sessionRpc } from "../../rpc/stubs";
import type { Admission } from "../../rpc/tenant";
import type { RouteDecision } from "../../schemas/routing";
import type { Run } from "../../schemas/run";
import { DEFAULT_TTL_S, type SessionView, type StoredHistoryItem } from "../../schemas/session";
import { admit, release } from "../../services/admissions";
import { agentDirectory } from "../../services/registry-cache";
import { routeInput } from "../../services/routing";
import { RUN_CALL_DEADLINE_MS, sessionMissing, sessionValue } from "../../services/session-results";
import { isSessionId, newSessionId } from "../../sessions/ids";
import { recordRouted } from "../route-history";
import { MCP_ACTOR, type McpContext } from "./context";
import { assertExposed, exposedDecision, isExposed } from "./expose";

/**
 * Sessions as the MCP tools reach them: the same registry, router, admissions and SessionDO
 * RPC the HTTP API calls (src/api/sessions.ts), with the tenant's exposure checked first.
 */

/** The session's RPC stub; an id that cannot be a session's is not found without reaching an object. */
export function sessionOf(ctx: McpContext, id: string, deadlineMs?: number): SessionRpc {
  if (!isSessionId(id)) throw sessionMissing(id)();
  return sessionRpc(ctx.env, ctx.tenant, id, deadlineMs);
}

/** The router's decision for `input`, as an MCP client may see it (./expose.ts). */
export async function exposedRoute(
  ctx: McpContext,
  input: string,
  options: { strategy?: RouteDecision["strategy"] } = {},
): Promise<{ decision: RouteDecision; capacityOf: (agent: string) => number | null }> {
  const { decision, registry } = await routeInput(ctx.env, ctx.tenant, input, {
    ...options,
    background: ctx.background,
  });
  const summaries = registry.agents
    .filter((a) => a.enabled && isExposed(ctx.exposure, a.name))
    .map((a) => ({ name: a.name, title: a.title ?? a.name, description: a.description }));
  return {
    decision: exposedDecision(decision, ctx.exposure, summaries),
    capacityOf: (agent) => registry.byName.get(agent)?.max_concurrent_sessions ?? null,
  };
}

/** The agent a new session starts with: the one named (exposed, registered, enabled), else the router's pick. */
async function startingAgent(
  ctx: McpContext,
  agent: string | undefined,
  routeFrom: string | undefined,
): Promise<{ agent: string; route?: RouteDecision; capacity: number | null }> {
  if (agent !== undefined) {
    assertExposed(ctx.exposure, agent);
    const definition = (await agentDirectory(ctx.env.DB, ctx.tenant)).byName.get(agent);
    if (!definition) throw new RelayError("AGENT_NOT_FOUND", `No agent named '${agent}'.`, { agent });
    if (!definition.enabled)
      throw new RelayError("AGENT_UNAVAILABLE", `Agent '${agent}' is disabled.`, { agent, reason: "disabled" });
    return { agent, capacity: definition.max_concurrent_sessions ?? null };
  }
  if (routeFrom === undefined)
    throw new RelayError("VALIDATION_FAILED", "Name an agent, or give an input for the router.", {
      issues: [{ path: "agent", message: "required when there is no input to route" }],
    });
  const { decision, capacityOf } = await exposedRoute(ctx, routeFrom);
  if (!decision.agent)
    throw new RelayError("NO_ROUTE", "The router found no agent for this input; name one.", { route: decision });
  return { agent: decision.agent, route: decision, capacity: capacityOf(decision.agent) };
}

export interface NewSession {
  agent?: string | undefined;
  /** Routed when no agent is named; stored as the first message when `store` is set. */
  input?: string | undefined;
  store?: boolean;
  metadata?: Record<string, unknown> | undefined;
  ttl_s?: number | undefined;
}

/**
 * A new session, admitted against the tenant's quotas before anything is routed or made (with
 * its first run when `withRun`: the run then starts without asking again); when making it
 * fails, the admission is taken back.
 */
export async function startSession(
  ctx: McpContext,
  args: NewSession,
  withRun: boolean,
): Promise<{ view: SessionView; route?: RouteDecision; admission: Admission }> {
  const admission = unwrap(await admit(ctx.env, ctx.tenant, { sessions: true, runs: withRun }, ctx.background));
  try {
    const { agent, route, capacity } = await startingAgent(ctx, args.agent, args.input);
    const id = newSessionId();
    const created = await sessionRpc(ctx.env, ctx.tenant, id).create(
      ctx.tenant,
      id,
      {
        agent,
        capacity,
        metadata: { ...args.metadata, channel: "mcp" },
        ttl_s: args.ttl_s ?? DEFAULT_TTL_S,
        ...(args.store && args.input !== undefined ? { input: args.input } : {}),
        ...(route ? { route } : {}),
      },
      MCP_ACTOR,
    );
    if (route && args.input !== undefined)
      recordRouted(ctx.env, ctx.tenant, ctx.background, { session_id: id, input: args.input, decision: route });
    return { view: await sessionValue(ctx.env, ctx.tenant, id, created), ...(route ? { route } : {}), admission };
  } catch (error) {
    ctx.background(release(ctx.env, ctx.tenant, admission));
    throw error;
  }
}

/** The session as `GET /v1/sessions/:id` shows it. */
export async function readSession(ctx: McpContext, id: string): Promise<SessionView> {
  return sessionValue(ctx.env, ctx.tenant, id, await sessionOf(ctx, id).get());
}

/** The session's newest run, or null when it has none. */
export async function latestRun(ctx: McpContext, id: string): Promise<Run | null> {
  const runs = await sessionValue(ctx.env, ctx.tenant, id, await sessionOf(ctx, id).listRuns({ limit: 1 }));
  return runs.runs[0] ?? null;
}

/** The most transcript items a read returns (a session's history holds at most this many). */
export const TRANSCRIPT_LIMIT = 1000;
const TRANSCRIPT_PAGE = 200;

/** The session's messages, oldest first, at most TRANSCRIPT_LIMIT. */
export async function transcript(ctx: McpContext, id: string): Promise<StoredHistoryItem[]> {
  const items: StoredHistoryItem[] = [];
  let after: number | undefined;
  while (items.length < TRANSCRIPT_LIMIT) {
    const page = await sessionValue(
      ctx.env,
      ctx.tenant,
      id,
      await sessionOf(ctx, id).history({ ...(after === undefined ? {} : { after }), limit: TRANSCRIPT_PAGE }),
    );
    items.push(...page.items);
    if (page.next_after === null) break;
    after = page.next_after;
  }
  return items.slice(0, TRANSCRIPT_LIMIT);
}

export { RUN_CALL_DEADLINE_MS };
