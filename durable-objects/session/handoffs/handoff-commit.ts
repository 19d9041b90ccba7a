import { turnInterrupted, turnRestored } from "../../../src/audit/handoff-events";
import { inboxItemCreated } from "../../../src/audit/run-events";
import type { Result } from "../../../src/errors";
import type { HandoffEffect } from "../../../src/handoff";
import { keepsOutcome } from "../../../src/handoff/idempotency";
import {
  type Advanced,
  type HandoffRow,
  type HandoffStep,
  inFlightOf,
  type StepContext,
  switchedSession,
} from "../../../src/handoff/record";
import { isOpen } from "../../../src/handoff/statuses";
import { openItem } from "../../../src/runtime/inbox";
import type { Handoff, HandoffContext } from "../../../src/schemas/handoff";
import type { InboxItem } from "../../../src/schemas/inbox";
import { type SessionRecord, touch } from "../../../src/sessions/model";
import { TIMER_KEYS } from "../../shared/timer-kinds";
import type { SessionKernel } from "../session-kernel";
import type { HandoffStore, SessionLease } from "./handoff-store";

/**
 * Writing one handoff step: the session row (its lock set or cleared, the switch when the
 * step activates the target), the handoff row, the transition's audit records and every
 * synchronous effect, in one transaction through the kernel's write path. The one
 * asynchronous effect, `take_lease`, is the flow's to carry out after the commit.
 */

/** What writing a handoff step uses of the session object. */
export type CommitKernel = Pick<SessionKernel, "checkpoint" | "commit" | "inbox" | "outbox" | "store" | "timers">;

export interface StepOptions {
  /** The step the handoff is about to take, or null when it waits or is finished. */
  step: HandoffStep | null;
  /** Count as session activity (pushes the idle expiry); timers do not. */
  touch?: boolean;
  /** The context the target receives, for a step that activates it. */
  context?: HandoffContext;
  /** Runs first inside the transaction (recording the idempotency key). */
  before?: () => void;
  /** What an idempotent replay answers, when this step answers the request. */
  answer?: (row: HandoffRow) => Result<unknown>;
}

export async function commitStep(
  k: CommitKernel,
  store: HandoffStore,
  session: SessionRecord,
  step: Advanced,
  ctx: StepContext,
  options: StepOptions,
): Promise<HandoffRow> {
  let row: HandoffRow = { ...step.row, step: options.step, record: withDeadline(step) };
  const activated = step.effects.some((e) => e.type === "activate_target");
  if (activated && (!row.plan || !options.context))
    throw new Error(`handoff ${row.record.id}: activation without a plan and a context`);
  const switched = activated ? switchedSession(session, row.plan!, options.context!) : session;
  const base = { ...switched, in_flight_handoff: isOpen(row.record.status) ? inFlightOf(row.record) : null };
  const next = options.touch && session.status === "active" ? touch(base, ctx.now) : base;
  await k.commit(next, step.records, () => {
    options.before?.();
    if (activated) k.checkpoint("activate");
    row = applyEffects(k, store, step.effects, row, ctx);
    store.save(row, ctx.now);
    // Only a request with an Idempotency-Key has a row to answer; an answer of the server's fault is not kept.
    if (options.answer && row.record.idempotency_key !== undefined) {
      const outcome = options.answer(row);
      if (keepsOutcome(outcome)) store.answer(row.record.id, outcome);
      else store.forgetRequest(row.record.id);
    }
  });
  return row;
}

/** `deadline_at` is set while a handoff waits, and only then. */
function withDeadline(step: Advanced): Handoff {
  const timeout = step.effects.find((e) => e.type === "schedule_timeout");
  const record = step.row.record;
  if (timeout?.type === "schedule_timeout") return { ...record, deadline_at: new Date(timeout.at).toISOString() };
  if (record.status === "pending" || record.deadline_at === undefined) return record;
  const { deadline_at: _cleared, ...rest } = record;
  return rest;
}

/** The synchronous effects, in order, inside the step's transaction. */
export function applyEffects(
  k: CommitKernel,
  store: HandoffStore,
  effects: readonly HandoffEffect[],
  row: HandoffRow,
  ctx: StepContext,
): HandoffRow {
  let out = row;
  const id = row.record.id;
  // What the session lease row becomes (undefined: unchanged).
  let nextLease: SessionLease | null | undefined;
  for (const effect of effects) {
    switch (effect.type) {
      case "schedule_timeout":
        k.timers.schedule("handoff.deadline", effect.at, { handoff_id: id }, { key: TIMER_KEYS.handoffDeadline });
        break;
      case "cancel_timeout":
        k.timers.cancel(TIMER_KEYS.handoffDeadline);
        break;
      case "interrupt_source":
        if (k.store.agentStatus()[effect.agent] === "busy") {
          k.store.setAgentStatus(effect.agent, "idle", ctx.now);
          k.outbox.append([turnInterrupted(ctx.scope, ctx.actor, ctx.now, { agent: effect.agent, handoff_id: id })]);
          out = { ...out, interrupted: true };
        }
        break;
      case "restore_source":
        k.store.setAgentStatus(effect.agent, "busy", ctx.now);
        k.outbox.append([turnRestored(ctx.scope, ctx.actor, ctx.now, { agent: effect.agent, handoff_id: id })]);
        break;
      case "activate_target":
        // The switch itself is the session row commitStep writes (switchedSession).
        break;
      case "hold_target_lease":
        // The target's lease becomes the session's, tentative until the AgentDO confirms it.
        nextLease = { agent: effect.agent, ...out.lease!, state: "tentative", capacity: out.capacity! };
        break;
      case "release_source_lease": {
        const held = store.sessionLease();
        if (held?.agent === effect.agent) {
          store.queueRelease({
            agent: effect.agent,
            lease_id: held.lease_id,
            fencing_token: held.fencing_token,
            reason: `handoff ${id} completed`,
          });
          nextLease ??= null;
        }
        break;
      }
      case "release_target_lease":
        store.queueRelease({ agent: effect.agent, ...out.lease!, reason: `handoff ${id} rolled back` });
        break;
      case "escalate": {
        const item = escalation(out.record, ctx.now);
        k.inbox.save(item);
        k.outbox.append([
          inboxItemCreated(ctx.scope, ctx.actor, ctx.now, {
            inbox_id: item.id,
            kind: item.kind,
            agent: item.agent,
            run_id: null,
            handoff_id: item.handoff_id,
            reason: item.reason,
            expires_at: null,
          }),
        ]);
        break;
      }
      case "take_lease":
      case "audit":
        // take_lease: an RPC, the flow's after this commit; audit: written as the step's records.
        break;
    }
  }
  if (nextLease !== undefined) store.setSessionLease(nextLease);
  return out;
}

/** A graceful handoff that timed out with on_timeout: escalate, as an inbox item (it does not expire). */
function escalation(record: Handoff, now: number): InboxItem {
  return openItem({
    kind: "handoff_escalation",
    session_id: record.session_id,
    agent: record.source,
    handoff_id: record.id,
    source_agent: record.source,
    target_agent: record.target,
    reason: record.request.reason,
    details: {
      timeout_s: record.request.timeout_s,
      summary: record.request.summary ?? null,
      task: record.request.task ?? null,
    },
    now,
    expires_at: null,
  });
}
