import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import type { AgentDO } from "../../durable-objects/agent";
import type { SessionDO } from "../../durable-objects/session";
import { agentRpc, agentStubFor, sessionRpc, sessionStubFor, type AgentRpc, type SessionRpc } from "../../durable-objects/stubs";
import { newSessionId } from "../../src/sessions/ids";

/** A fresh session object (ids are unique per test: storage is shared across a file). */
export function sessionStub(tenant = "alpha", id = newSessionId()): { id: string; stub: DurableObjectStub<SessionDO>; rpc: SessionRpc } {
  return { id, stub: sessionStubFor(env, tenant, id), rpc: sessionRpc(env, tenant, id) };
}

export function agentStub(tenant: string, agent: string): { stub: DurableObjectStub<AgentDO>; rpc: AgentRpc } {
  return { stub: agentStubFor(env, tenant, agent), rpc: agentRpc(env, tenant, agent) };
}

/**
 * Runs the object's alarm until nothing is due now. Real alarms also fire in tests; running
 * them here is harmless since timer handlers are idempotent.
 */
export async function drainDue(stub: DurableObjectStub<SessionDO> | DurableObjectStub<AgentDO>, max = 20): Promise<void> {
  for (let i = 0; i < max; i++) {
    const due = await runInDurableObject(stub, async (instance: SessionDO | AgentDO, state) => {
      const tables = state.storage.sql.exec("SELECT 1 FROM sqlite_master WHERE name = 'timers'").toArray();
      if (tables.length === 0) return false;
      const row = state.storage.sql.exec("SELECT MIN(due_at) AS due FROM timers").one() as { due: number | null };
      return row.due !== null && row.due <= instance.clock();
    });
    if (!due) return;
    await runDurableObjectAlarm(stub);
  }
  throw new Error("timers still due after draining");
}

/** Moves the object's clock forward by `ms` (until the object is evicted). */
export async function advanceClock(stub: DurableObjectStub<SessionDO> | DurableObjectStub<AgentDO>, ms: number): Promise<void> {
  await runInDurableObject(stub, (instance: SessionDO | AgentDO) => {
    const base = instance.clock;
    instance.clock = () => base() + ms;
  });
}

/** The audit_log rows D1 holds for one session, oldest first. */
export async function d1Audit(sessionId: string): Promise<{ id: string; action: string }[]> {
  const { results } = await env.DB.prepare("SELECT id, action FROM audit_log WHERE session_id = ?1 ORDER BY id").bind(sessionId).all<{ id: string; action: string }>();
  return results;
}

/** Pins the object's clock at `ms` (until the object is evicted): timers due by then run on the next alarm. */
export async function setClock(stub: DurableObjectStub<SessionDO> | DurableObjectStub<AgentDO>, ms: number): Promise<void> {
  await runInDurableObject(stub, (instance: SessionDO | AgentDO) => {
    instance.clock = () => ms;
  });
}

export interface TimerState {
  kind: string;
  key: string | null;
  due_at: number;
  attempts: number;
  last_error: string | null;
}

/** The object's timers and its alarm, read from inside it. */
export async function timersOf(stub: DurableObjectStub<SessionDO> | DurableObjectStub<AgentDO>): Promise<{ timers: TimerState[]; alarm: number | null }> {
  return runInDurableObject(stub, async (_instance, state) => {
    const present = state.storage.sql.exec("SELECT 1 FROM sqlite_master WHERE name = 'timers'").toArray().length > 0;
    const timers = present
      ? (state.storage.sql.exec("SELECT kind, key, due_at, attempts, last_error FROM timers ORDER BY due_at").toArray() as unknown as TimerState[])
      : [];
    return { timers, alarm: await state.storage.getAlarm() };
  });
}

/** Makes D1's audit_log fail for real (the table disappears), or brings it back. */
export async function auditTableDown(down: boolean): Promise<void> {
  await env.DB.exec(down ? "ALTER TABLE audit_log RENAME TO audit_log_offline" : "ALTER TABLE audit_log_offline RENAME TO audit_log");
}
