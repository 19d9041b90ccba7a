import { flushBackoffMs } from "../../../src/audit/outbox-policy";
import { SYSTEM_ACTOR } from "../../../src/audit/record";
import { commandOnSessionEnd } from "../../../src/handoff/flow-rules";
import { advance, must } from "../../../src/handoff/record";
import type { TimerHandlers, TimerOutcome, TimerRow } from "../../shared/timers";
import type { SessionEndHook } from "../session-lifecycle";
import { applyEffects, type CommitKernel } from "./handoff-commit";
import type { SessionHandoffs } from "./session-handoffs";

/**
 * The handoff feature's timers on the session's one alarm — a graceful handoff's deadline
 * and the sweep that recovers crashed flows and finishes lease work — and its part in the
 * end of a session: a pending handoff is cancelled and the current agent's lease freed.
 */

export function handoffTimers(h: SessionHandoffs): TimerHandlers {
  return {
    "handoff.deadline": (timer, now) => deadline(h, timer.payload.handoff_id, now),
    "handoff.sweep": (timer, now) => sweep(h, timer, now),
  };
}

/** A graceful handoff's `timeout_s` passed: time it out unless it already moved on. */
async function deadline(h: SessionHandoffs, handoffId: string, now: number): Promise<TimerOutcome> {
  const row = h.store.get(handoffId);
  if (row?.record.status !== "pending") return { type: "done" };
  const due = Date.parse(row.record.deadline_at ?? "");
  if (now < due) return { type: "again", at: due };
  const session = h.flow.currentSession();
  if (!session) return { type: "done" };
  await h.flow.finishTimeout(row, session, { ...h.flow.ctx(session, SYSTEM_ACTOR), now });
  return { type: "done" };
}

async function sweep(h: SessionHandoffs, timer: TimerRow, now: number): Promise<TimerOutcome> {
  if (!h.store.present()) return { type: "done" };
  await h.recovery.recoverOrphans();
  const settled = await h.leases.settle();
  if (settled && h.recovery.orphans().length === 0) return { type: "done" };
  return { type: "retry", at: now + flushBackoffMs(timer.attempts + 1), error: "handoff work left after the sweep" };
}

/** When the session ends: its pending handoff is cancelled and its agent's lease queued for release, then released. */
export function handoffEndHook(h: SessionHandoffs, k: CommitKernel): SessionEndHook {
  return {
    onEnd(session, now, reason) {
      if (!h.store.present()) return session;
      let closed = session;
      const ctx = { ...h.flow.ctx(session, SYSTEM_ACTOR), now };
      for (const row of h.store.open()) {
        const command = commandOnSessionEnd(row);
        if (command === null) continue;
        const step = must(advance(row, { type: command, reason }, ctx));
        k.outbox.append(step.records);
        h.store.save({ ...applyEffects(k, h.store, step.effects, step.row, ctx), step: null }, now);
        closed = { ...closed, in_flight_handoff: null };
      }
      const lease = h.store.sessionLease();
      if (lease) {
        h.store.queueRelease({
          agent: lease.agent,
          lease_id: lease.lease_id,
          fencing_token: lease.fencing_token,
          reason,
        });
        h.store.setSessionLease(null);
      }
      return closed;
    },
    settle: () => (h.store.present() ? h.leases.settle() : Promise.resolve(true)),
  };
}
