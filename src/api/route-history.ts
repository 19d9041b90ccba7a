import type { Context } from "hono";
import type { AppEnv } from "../app-env";
import { writeAuditBatch } from "../audit/d1-store";
import { auditEvent } from "../audit/events";
import { API_ACTOR } from "../audit/record";
import type { Env } from "../env";
import { RelayError, unwrap } from "../errors";
import { patchFromVars, resolveConfig } from "../routing/config";
import { routedInput } from "../routing/replay/history";
import { HISTORY_CALL_DEADLINE_MS, routerRpc } from "../rpc/stubs";
import type { HistoryCleared } from "../schemas/replay";
import type { RouteDecision } from "../schemas/routing";
import { tenantHead } from "../services/registry-cache";
import { writeDatabase } from "../services/tenant-shards";

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
  // The tenant's setting as the route read it (the head is cached per isolate: no extra read).
  const { tenantConfig } = await tenantHead(env.DB, tenant);
  const { config } = resolveConfig({ env: patchFromVars(env).patch, tenant: tenantConfig });
  if (!config.record_inputs) return;
  const held = await routerRpc(env, tenant, HISTORY_CALL_DEADLINE_MS).recordRoute(entry);
  if (!held.ok) console.warn("route history: not recorded", held.error);
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
