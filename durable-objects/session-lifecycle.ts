import { writeAuditBatch } from "../src/audit/d1-store";
import { sessionExpired } from "../src/audit/events";
import { flushBackoffMs } from "../src/audit/outbox-policy";
import { SYSTEM_ACTOR } from "../src/audit/record";
import { end, isIdleExpired, summarize } from "../src/sessions/model";
import { writeSessionSummary } from "../src/sessions/summary-store";
import { auditScope, type SessionKernel } from "./session-kernel";
import type { TimerHandlers, TimerOutcome, TimerRow } from "./timers";

/**
 * The session's own timers: draining the audit outbox to D1, idle expiry, and the purge
 * of a deleted session. D1 failures become retries with the outbox backoff, forever:
 * a record is never dropped and storage is never wiped before its audit is in D1.
 */
export function lifecycleTimers(k: SessionKernel): TimerHandlers {
  return {
    "outbox.flush": (timer, now) => flushOutbox(k, timer, now),
    "session.expire": (timer, now) => expire(k, timer, now),
    "session.purge": (timer, now) => finalize(k, timer, now, false),
  };
}

const retry = (timer: TimerRow, now: number, error: unknown): TimerOutcome => ({
  type: "retry",
  at: now + flushBackoffMs(timer.attempts + 1),
  error: String(error),
});

async function flushOutbox(k: SessionKernel, timer: TimerRow, now: number): Promise<TimerOutcome> {
  try {
    const { remaining } = await k.outbox.flush((records) => writeAuditBatch(k.env.DB, records));
    return remaining > 0 ? { type: "again", at: k.now() } : { type: "done" };
  } catch (error) {
    return retry(timer, now, error);
  }
}

async function expire(k: SessionKernel, timer: TimerRow, now: number): Promise<TimerOutcome> {
  const session = k.store.load();
  if (!session || session.status === "deleted") return { type: "done" };
  if (session.status === "active") {
    // A change since the timer was set moved the deadline (and the timer with it).
    if (!isIdleExpired(session, now)) return { type: "again", at: session.expires_at };
    const expired = end(session, "expired", now);
    const record = sessionExpired(auditScope(expired), SYSTEM_ACTOR, now, {
      agent: expired.current_agent,
      expires_at: new Date(session.expires_at).toISOString(),
      idle_s: Math.round((now - session.updated_at) / 1000),
    });
    k.transaction(() => {
      k.store.save(expired);
      k.outbox.append([record]);
    });
  }
  return finalize(k, timer, now, true);
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
    if (archive) await writeSessionSummary(k.env.DB, summarize(session, k.store.historyLength(), k.store.agentStatus()));
  } catch (error) {
    return retry(timer, now, error);
  }
  await k.destroy();
  return { type: "destroyed" };
}
