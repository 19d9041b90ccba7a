import { flushBackoffMs } from "../src/audit/outbox-policy";
import { SYSTEM_ACTOR } from "../src/audit/record";
import { isIdleExpired } from "../src/sessions/model";
import { DEADLINE_KEY } from "./handoff-commit";
import { advance, must } from "./handoff-record";
import type { SessionHandoffs } from "./session-handoffs";
import type { SessionKernel } from "./session-kernel";
import { agentRpc } from "./stubs";
import type { TimerHandler, TimerHandlers, TimerOutcome, TimerRow } from "./timers";

/**
 * The handoff feature's timers, on the session's one alarm (kind `handoff.timeout`):
 * a graceful handoff's deadline (payload `{ handoff_id }`) and the sweep (payload
 * `{ sweep: true }`) that recovers crashed flows and finishes lease work. It also wraps
 * the lifecycle's expiry and purge so the current agent's lease is freed before a
 * session's storage goes, and a pending handoff is cancelled rather than left open.
 */

const retry = (timer: TimerRow, now: number, why: string): TimerOutcome => ({ type: "retry", at: now + flushBackoffMs(timer.attempts + 1), error: why });

export function handoffTimers(h: SessionHandoffs, k: SessionKernel, base: TimerHandlers): TimerHandlers {
  const handlers: TimerHandlers = {
    "handoff.timeout": (timer, now) => {
      const handoffId = (timer.payload as { handoff_id?: unknown } | null)?.handoff_id;
      return typeof handoffId === "string" ? deadline(h, handoffId, now) : sweep(h, timer, now);
    },
  };
  const expire = base["session.expire"];
  const purge = base["session.purge"];
  if (expire) handlers["session.expire"] = (timer, now) => beforeExpiry(h, k, expire, timer, now);
  if (purge) {
    handlers["session.purge"] = async (timer, now) => ((await endSession(h, k, "session deleted")) ? purge(timer, now) : retry(timer, now, "lease release failed"));
  }
  return handlers;
}

/** A graceful handoff's `timeout_s` passed: time it out unless it already moved on. */
async function deadline(h: SessionHandoffs, handoffId: string, now: number): Promise<TimerOutcome> {
  const row = h.store.get(handoffId);
  if (!row || row.record.status !== "pending") return { type: "done" };
  const due = Date.parse(row.record.deadline_at ?? "");
  if (now < due) return { type: "again", at: due };
  const session = h.currentSession();
  if (!session) return { type: "done" };
  await h.finishTimeout(row, session, { ...h.ctx(session, SYSTEM_ACTOR), now });
  return { type: "done" };
}

async function sweep(h: SessionHandoffs, timer: TimerRow, now: number): Promise<TimerOutcome> {
  if (!h.store.present()) return { type: "done" };
  await h.recoverOrphans();
  const settled = await h.leases.settle();
  if (settled && h.orphans().length === 0) return { type: "done" };
  return retry(timer, now, "handoff work left after the sweep");
}

/**
 * Closes what an ended (deleted or expired) session still has open: a pending handoff is
 * cancelled and the current agent's lease queued for release, in one transaction; then
 * the releases run. Idempotent; true when nothing is left to do.
 */
export async function endSession(h: SessionHandoffs, k: SessionKernel, reason: string): Promise<boolean> {
  const session = k.store.load();
  if (!session || session.status === "active" || !h.store.present()) return true;
  const pending = h.store.open().find((r) => r.record.status === "pending");
  const lease = h.store.sessionLease();
  if (pending || lease) {
    const ctx = h.ctx(session, SYSTEM_ACTOR);
    const step = pending ? must(advance(pending, { type: "cancel", reason }, ctx)) : { row: null, records: [], effects: [] };
    await k.commit(step.row ? { ...session, in_flight_handoff: null } : session, step.records, () => {
      if (step.row) {
        k.timers.cancel(DEADLINE_KEY);
        h.store.save({ ...step.row, step: null }, ctx.now);
      }
      if (lease) {
        h.store.queueRelease({ agent: lease.agent, lease_id: lease.lease_id, fencing_token: lease.fencing_token, reason });
        h.store.setSessionLease(null);
      }
    });
  }
  return h.leases.settle();
}

/**
 * Before an idle session expires, its agent's lease is released; the expiry itself (the
 * lifecycle's handler) then runs in the same synchronous stretch as the re-check, so a
 * call that arrived during the release keeps the session alive and the lease is re-taken.
 */
async function beforeExpiry(h: SessionHandoffs, k: SessionKernel, expire: TimerHandler, timer: TimerRow, now: number): Promise<TimerOutcome> {
  const session = k.store.load();
  if (!session || !h.store.present()) return expire(timer, now);
  if (session.status !== "active") {
    return (await endSession(h, k, "session expired")) ? expire(timer, now) : retry(timer, now, "lease release failed");
  }
  if (!isIdleExpired(session, now)) return expire(timer, now);
  const lease = h.store.sessionLease();
  if (lease) {
    const released = await agentRpc(k.env, session.tenant, lease.agent).release({ lease_id: lease.lease_id }, lease.fencing_token);
    if (!released.ok) return retry(timer, now, released.error.message);
  }
  const again = k.store.load();
  if (again?.status === "active" && isIdleExpired(again, now)) {
    const pending = h.store.open().find((r) => r.record.status === "pending");
    const ctx = { ...h.ctx(again, SYSTEM_ACTOR), now };
    const step = pending ? must(advance(pending, { type: "cancel", reason: "session expired" }, ctx)) : null;
    // Not the kernel's commit: it would re-arm the very expiry timer that is running. The
    // lifecycle's handler, called next, flushes these records with its own.
    k.transaction(() => {
      if (step) {
        k.store.save({ ...again, in_flight_handoff: null });
        k.outbox.append(step.records);
        k.timers.cancel(DEADLINE_KEY);
        h.store.save({ ...step.row, step: null }, ctx.now);
      }
      h.store.setSessionLease(null);
    });
    // The lifecycle marks the session expired before its first await: nothing interleaves.
    return expire(timer, now);
  }
  if (lease) {
    // Touched while the lease was being released: the session lives on, so its agent takes the lease again.
    k.transaction(() => h.store.setSessionLease({ ...lease, state: "tentative" }));
    await h.leases.settle();
  }
  return expire(timer, now);
}
