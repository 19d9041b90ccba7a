import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { PARKED } from "../../durable-objects/shared/timers";
import { FLUSH_WINDOW_MS } from "../../src/audit/outbox-policy";
import type { AgentLoad, AgentRpc } from "../../src/rpc/agent";
import type { SessionRpc } from "../../src/rpc/session";
import { agentRpc, sessionRpc } from "../../src/rpc/stubs";
import type { AgentDefinition, AgentDefinitionInput } from "../../src/schemas/agent";
import { agentLoad } from "../../src/services/agent-capacity";
import { agentDirectory } from "../../src/services/registry-cache";
import { agentObjectName, newSessionId, sessionObjectName } from "../../src/sessions/ids";
import { allShards, shardOf } from "../shards";
import type { AgentDO, SessionDO } from "../worker";

/** A fresh session object (ids are unique per test: storage is shared across a file). */
export function sessionStub(
  tenant = "alpha",
  id = newSessionId(),
): { id: string; stub: DurableObjectStub<SessionDO>; rpc: SessionRpc } {
  const stub = env.SESSIONS.get(
    env.SESSIONS.idFromName(sessionObjectName(tenant, id)),
  ) as unknown as DurableObjectStub<SessionDO>;
  return { id, stub, rpc: sessionRpc(env, tenant, id) };
}

export function agentStub(tenant: string, agent: string): { stub: DurableObjectStub<AgentDO>; rpc: AgentRpc } {
  const stub = env.AGENTS.get(
    env.AGENTS.idFromName(agentObjectName(tenant, agent)),
  ) as unknown as DurableObjectStub<AgentDO>;
  return { stub, rpc: agentRpc(env, tenant, agent) };
}

/**
 * An agent's load over every shard of its capacity (its registered `max_concurrent_sessions`),
 * lease ids as sessions know them: where a session's lease is, whichever shard holds it.
 */
export async function agentLoadOf(tenant: string, agent: string): Promise<AgentLoad> {
  const capacity = (await agentDirectory(env.DB, tenant)).byName.get(agent)?.max_concurrent_sessions ?? null;
  const load = await agentLoad(env, tenant, agent, capacity);
  if (!load.ok) throw new Error(load.error.message);
  return load.value;
}

/**
 * Runs the object's alarm until nothing is due now. Real alarms also fire in tests; running
 * them here is harmless since timer handlers are idempotent.
 */
export async function drainDue(
  stub: DurableObjectStub<SessionDO> | DurableObjectStub<AgentDO>,
  max = 20,
): Promise<void> {
  for (let i = 0; i < max; i++) {
    const due = await runInDurableObject(stub, async (instance: SessionDO | AgentDO, state) => {
      const tables = state.storage.sql.exec("SELECT 1 FROM sqlite_master WHERE name = 'timers'").toArray();
      if (tables.length === 0) return false;
      const row = state.storage.sql.exec("SELECT MIN(due_at) AS due FROM timers").one() as { due: number | null };
      return row.due !== null && row.due <= instance.clock.now();
    });
    if (!due) return;
    await runDurableObjectAlarm(stub);
  }
  throw new Error("timers still due after draining");
}

/**
 * Runs what a commit left for the alarm once the audit flush window has passed: trace exports
 * go with the audit flush (docs/observability.md, What is sent, and when).
 */
export async function drainExports(stub: DurableObjectStub<SessionDO>): Promise<void> {
  await advanceClock(stub, FLUSH_WINDOW_MS);
  await drainDue(stub);
}

/** Moves the object's clock forward by `ms` (until the object is evicted). */
export async function advanceClock(
  stub: DurableObjectStub<SessionDO> | DurableObjectStub<AgentDO>,
  ms: number,
): Promise<void> {
  await runInDurableObject(stub, (instance: SessionDO | AgentDO) => instance.clock.advance(ms));
}

/**
 * Flushes the session's outbox to D1 now: a record's flush starts FLUSH_WINDOW_MS after it
 * was written, so the object's clock moves past the window, then what is due runs.
 */
export async function flushOutbox(stub: DurableObjectStub<SessionDO>): Promise<void> {
  await advanceClock(stub, FLUSH_WINDOW_MS);
  await drainDue(stub);
}

/** The audit_log rows D1 holds for one session, oldest first. */
export async function d1Audit(sessionId: string, tenant = "alpha"): Promise<{ id: string; action: string }[]> {
  const { results } = await (await shardOf(tenant))
    .prepare("SELECT id, action FROM audit_log WHERE session_id = ?1 ORDER BY id")
    .bind(sessionId)
    .all<{ id: string; action: string }>();
  return results;
}

/**
 * Leaves in a session's live events, just after the newest, two rows of the session's latest
 * run that this version's LiveEvent schema refuses though their types are known — what a Relay
 * of another version could have written: a `message` with no data, and a `run_completed` whose
 * run is no run. The session's stream passes them on as stored (it checks the envelope only),
 * so a reader of the stream meets them.
 */
export async function leaveUnreadableLiveEvents(stub: DurableObjectStub<SessionDO>, sessionId: string): Promise<void> {
  await runInDurableObject(stub, (_instance: SessionDO, state) => {
    const sql = state.storage.sql;
    const newest = sql
      .exec<{ id: string }>(
        "SELECT MAX(id) AS id FROM (SELECT id FROM live_events UNION ALL SELECT id FROM run_events)",
      )
      .one().id;
    const runId = sql
      .exec<{ run_id: string }>("SELECT run_id FROM live_events WHERE run_id IS NOT NULL ORDER BY id DESC LIMIT 1")
      .one().run_id;
    const envelope = { session_id: sessionId, run_id: runId, at: new Date().toISOString() };
    const rows = [
      { id: `${newest}0`, type: "message", ...envelope, data: null },
      { id: `${newest}1`, type: "run_completed", ...envelope, data: { status: "completed", output: "not the answer" } },
    ];
    for (const row of rows)
      sql.exec("INSERT INTO live_events (id, run_id, event) VALUES (?, ?, ?)", row.id, runId, JSON.stringify(row));
  });
}

/** Pins the object's clock at `ms` (until the object is evicted): timers due by then run on the next alarm. */
export async function setClock(
  stub: DurableObjectStub<SessionDO> | DurableObjectStub<AgentDO>,
  ms: number,
): Promise<void> {
  await runInDurableObject(stub, (instance: SessionDO | AgentDO) => instance.clock.pin(ms));
}

export interface TimerState {
  kind: string;
  key: string | null;
  due_at: number;
  attempts: number;
  last_error: string | null;
}

/** The object's timers that will fire, the kinds of those parked (never due), and its alarm, read from inside it. */
export async function timersOf(
  stub: DurableObjectStub<SessionDO> | DurableObjectStub<AgentDO>,
): Promise<{ timers: TimerState[]; parked: string[]; alarm: number | null }> {
  return runInDurableObject(stub, async (_instance, state) => {
    const present = state.storage.sql.exec("SELECT 1 FROM sqlite_master WHERE name = 'timers'").toArray().length > 0;
    const all = present
      ? (state.storage.sql
          .exec("SELECT kind, key, due_at, attempts, last_error FROM timers ORDER BY due_at")
          .toArray() as unknown as TimerState[])
      : [];
    return {
      timers: all.filter((t) => t.due_at < PARKED),
      parked: all.filter((t) => t.due_at === PARKED).map((t) => t.kind),
      alarm: await state.storage.getAlarm(),
    };
  });
}

/** Makes D1's audit_log fail for real on every shard (the table disappears), or brings it back. */
export async function auditTableDown(down: boolean): Promise<void> {
  for (const db of allShards())
    await db.exec(
      down ? "ALTER TABLE audit_log RENAME TO audit_log_offline" : "ALTER TABLE audit_log_offline RENAME TO audit_log",
    );
}

/**
 * Registers agents for a tenant through the API, as a client would: the registry in D1,
 * and this isolate's registry cache invalidated, so the session objects see them at once.
 */
export async function registerAgents(
  tenant: "alpha" | "beta",
  ...definitions: AgentDefinitionInput[]
): Promise<AgentDefinition[]> {
  const key = tenant === "alpha" ? "alpha-test-key" : "beta-test-key";
  const out: AgentDefinition[] = [];
  for (const definition of definitions) {
    const response = await (exports as unknown as { default: Fetcher }).default.fetch(
      new Request(`http://relay.test/v1/agents/${definition.name}`, {
        method: "PUT",
        headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
        body: JSON.stringify(definition),
      }),
    );
    const body = await response.json<{ definition: AgentDefinition }>();
    if (response.status >= 300)
      throw new Error(`registering ${definition.name}: ${response.status} ${JSON.stringify(body)}`);
    out.push(body.definition);
  }
  return out;
}
