import { writeAuditBatch } from "../../src/audit/d1-store";
import { sessionExpired } from "../../src/audit/events";
import { flushBackoffMs, nextFlushAt } from "../../src/audit/outbox-policy";
import { SYSTEM_ACTOR } from "../../src/audit/record";
import { end, isIdleExpired, type SessionRecord, summarize } from "../../src/sessions/model";
import { writeSessionSummary } from "../../src/sessions/summary-store";
import type { TimerHandlers, TimerOutcome, TimerRow } from "../shared/timers";
import { auditScope, type SessionKernel } from "./session-kernel";

/**
 * The session's own timers: draining the audit outbox to D1, idle expiry, and the purge
 * of a deleted session. D1 failures become retries with the outbox backoff, forever:
 * a record is never dropped and storage is never wiped before its audit is in D1.
 * Features close what they keep open through a `SessionEndHook`.
 */

/** What a feature does when its session ends (expires or is deleted). */
export interface SessionEndHook {
  /**
   * Inside the transaction that ends the session, before its record: close what is open
   * (rows, timers, audit records of its own) and return the session with its changes.
   */
  onEnd(session: SessionRecord, now: number, reason: string): SessionRecord;
  /** After that transaction, before the storage is wiped: the I/O it left. True when nothing is left. */
  settle(): Promise<boolean>;
}

export function lifecycleTimers(k: SessionKernel, hooks: readonly SessionEndHook[]): TimerHandlers {
  return {
    "outbox.flush": (timer, now) => flushOutbox(k, timer, now),
    "session.expire": (timer, now) => expire(k, hooks, timer, now),
    "session.purge": (timer, now) => purge(k, hooks, timer, now),
  };
}

/** The session with every feature's `onEnd` applied: call inside the ending transaction. */
export function closeFeatures(
  hooks: readonly SessionEndHook[],
  session: SessionRecord,
  now: number,
  reason: string,
): SessionRecord {
  return hooks.reduce((s, hook) => hook.onEnd(s, now, reason), session);
}

/** Every feature's `settle`; true when all are done. */
export async function settleFeatures(hooks: readonly SessionEndHook[]): Promise<boolean> {
  const results = await Promise.all(hooks.map((hook) => hook.settle()));
  return results.every(Boolean);
}

const retry = (timer: TimerRow, now: number, error: unknown): TimerOutcome => ({
  type: "retry",
  at: now + flushBackoffMs(timer.attempts + 1),
  error: String(error),
});

async function flushOutbox(k: SessionKernel, timer: TimerRow, now: number): Promise<TimerOutcome> {
  try {
    const { remaining } = await k.outbox.flush((records) => writeAuditBatch(k.env.DB, records));
    return remaining > 0 ? { type: "again", at: nextFlushAt(k.now()) } : { type: "done" };
  } catch (error) {
    return retry(timer, now, error);
  }
}

async function expire(
  k: SessionKernel,
  hooks: readonly SessionEndHook[],
  timer: TimerRow,
  now: number,
): Promise<TimerOutcome> {
  const session = k.store.load();
  if (!session || session.status === "deleted") return { type: "done" };
  if (session.status === "active") {
    // A change since the timer was set moved the deadline (and the timer with it).
    if (!isIdleExpired(session, now)) return { type: "again", at: session.expires_at };
    // Not the kernel's commit: it would re-arm the very expiry timer that is running.
    k.transaction(() => {
      const closed = closeFeatures(hooks, end(session, "expired", now), now, "session expired");
      k.store.save(closed);
      k.outbox.append([
        sessionExpired(auditScope(closed), SYSTEM_ACTOR, now, {
          agent: closed.current_agent,
          expires_at: new Date(session.expires_at).toISOString(),
          idle_s: Math.round((now - session.updated_at) / 1000),
        }),
      ]);
    });
  }
  if (!(await settleFeatures(hooks))) return retry(timer, now, "a feature could not close after the session expired");
  return finalize(k, timer, now, true);
}

async function purge(
  k: SessionKernel,
  hooks: readonly SessionEndHook[],
  timer: TimerRow,
  now: number,
): Promise<TimerOutcome> {
  if (!(await settleFeatures(hooks)))
    return retry(timer, now, "a feature could not close after the session was deleted");
  return finalize(k, timer, now, false);
}

/**
 * The end of an expired or deleted session: every audit record to D1 (and, for an expiry,
 * the summary that is also its tombstone), then the storage goes.
 */
async function finalize(k: SessionKernel, timer: TimerRow, now: number, archive: boolean): Promise<TimerOutcome> {
  const session = k.store.load();
  if (!session) return { type: "done" };
  try {
    const { remaining } = await k.outbox.flush((records) => writeAuditBatch(k.env.DB, records));
    if (remaining > 0) return { type: "again", at: k.now() };
    if (archive)
      await writeSessionSummary(k.env.DB, summarize(session, k.store.historyLength(), k.store.agentStatus()));
  } catch (error) {
    return retry(timer, now, error);
  }
  await k.destroy();
  return { type: "destroyed" };
}
