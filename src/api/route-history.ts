import type { Context } from "hono";
import * as z from "zod";
import type { AppEnv } from "../app-env";
import { writeAuditBatch } from "../audit/d1-store";
import { auditEvent } from "../audit/events";
import { API_ACTOR } from "../audit/record";
import type { Env } from "../env";
import { RelayError, unwrap } from "../errors";
import { patchFromVars, resolveConfig } from "../routing/config";
import { routedInput } from "../routing/replay/history";
import { HISTORY_CALL_DEADLINE_MS, routerRpc } from "../rpc/stubs";
import { AgentName } from "../schemas/agent";
import { HISTORY_PAGE_ROWS, type HistoryCleared, HistoryKind, type RoutedInputPage } from "../schemas/replay";
import type { RouteDecision } from "../schemas/routing";
import { tenantHead } from "../services/registry-cache";
import { writeDatabase } from "../services/tenant-shards";
import { decodeCursor, listPage, pagingQuery } from "./cursor";
import { RouteHistoryPosition } from "./positions";
import { readQuery } from "./validate";

/**
 * The tenant's routing history (docs/routing.md, Replay): the inputs of routed sessions, kept
 * by the tenant's router object for replays of a draft team, unless the tenant's routing
 * config says `record_inputs: false`.
 */

/**
 * Records a routed session off the request path (`background`: the request's waitUntil). A
 * record that fails or misses its deadline is logged and lost; the session never waits for it.
 */
export function recordRouted(
  env: Env,
  tenant: string,
  background: (work: Promise<unknown>) => void,
  routed: { session_id: string; input: string; decision: RouteDecision },
): void {
  background(
    recordNow(env, tenant, routed).catch((error: unknown) => console.error("route history: not recorded", error)),
  );
}

async function recordNow(
  env: Env,
  tenant: string,
  { session_id, input, decision }: { session_id: string; input: string; decision: RouteDecision },
): Promise<void> {
  const entry = routedInput(session_id, input, decision, Date.now());
  if (entry === null) return;
  if (!(await tenantRouting(env, tenant)).record_inputs) return;
  const held = await routerRpc(env, tenant, HISTORY_CALL_DEADLINE_MS).recordRoute(entry);
  if (!held.ok) console.warn("route history: not recorded", held.error);
}

/** The tenant's routing config as its routes read it (the head is cached per isolate: no extra read). */
async function tenantRouting(env: Env, tenant: string) {
  const { tenantConfig } = await tenantHead(env.DB, tenant);
  return resolveConfig({ env: patchFromVars(env).patch, tenant: tenantConfig }).config;
}

export const RouteHistoryQuery = z.strictObject({
  agent: AgentName.optional().describe("Only inputs the router gave this agent."),
  kind: HistoryKind.optional().describe(
    "`low_confidence`: confidence below the tenant's threshold; `fallback`: the fallback's default agent took it.",
  ),
  ...pagingQuery(HISTORY_PAGE_ROWS, 50),
});

/**
 * `GET /v1/route/history`: recorded inputs with their decisions, newest first. `low_confidence`
 * is read against the threshold the tenant's routes use now, which the page reports beside its items.
 */
export async function listHistory(c: Context<AppEnv>) {
  const { cursor, ...filters } = readQuery(c, RouteHistoryQuery);
  const tenant = c.get("tenant");
  const { threshold } = await tenantRouting(c.env, tenant);
  const before = decodeCursor(cursor, RouteHistoryPosition);
  const page = unwrap(
    await routerRpc(c.env, tenant, HISTORY_CALL_DEADLINE_MS).routeHistoryPage({ ...filters, threshold, before }),
  );
  const answer: RoutedInputPage = { ...listPage(page.items, page.next), threshold };
  return c.json(answer);
}

/**
 * `DELETE /v1/route/history`: the audit record first, so no history is ever cleared unrecorded
 * (D1 unavailable: 503 and nothing is cleared); then the rows go.
 */
export async function clearHistory(c: Context<AppEnv>) {
  const tenant = c.get("tenant");
  const record = auditEvent(
    { tenant, session_id: null },
    { action: "route.history_cleared", actor: API_ACTOR, details: {} },
    Date.now(),
  );
  try {
    await writeAuditBatch(await writeDatabase(c.env, tenant), [record]);
  } catch (error) {
    console.error("route.history_cleared could not be recorded", error);
    throw new RelayError("DEPENDENCY_UNAVAILABLE", "The audit trail is unavailable; the history was not cleared.", {
      reason: "audit",
    });
  }
  const cleared: HistoryCleared = unwrap(await routerRpc(c.env, tenant, HISTORY_CALL_DEADLINE_MS).clearRouteHistory());
  return c.json(cleared);
}
