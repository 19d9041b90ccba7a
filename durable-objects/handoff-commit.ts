import { turnInterrupted, turnRestored } from "../src/audit/handoff-events";
import type { Result } from "../src/errors";
import type { HandoffEffect } from "../src/handoff";
import { ulid } from "../src/lib/ulid";
import type { Handoff } from "../src/schemas/handoff";
import { touch, type SessionRecord } from "../src/sessions/model";
import { DEFAULT_CAPACITY } from "./handoff-leases";
import { inFlightOf, type Advanced, type StepContext } from "./handoff-record";
import { OPEN_STATUSES, type HandoffRow, type HandoffStep, type HandoffStore, type InboxItem, type SessionLease } from "./handoff-store";
import type { SessionKernel } from "./session-kernel";

/**
 * Writing one handoff step: the session row (its lock set or cleared), the handoff row,
 * the transition's audit records and the effects that are SQL, in one transaction
 * through the kernel's write path. The effects that are RPCs to AgentDOs (taking,
 * confirming, releasing leases) are left as rows for the flow to carry out after.
 */

/** The session's one graceful-deadline timer (one handoff in flight per session). */
export const DEADLINE_KEY = "handoff.deadline";

export interface StepOptions {
  /** The step the handoff is about to take, or null when it waits or is finished. */
  step: HandoffStep | null;
  /** Count as session activity (pushes the idle expiry); timers do not. */
  touch?: boolean;
  sessionPatch?: Partial<SessionRecord>;
  /** Runs first inside the transaction (the idempotency key; the `activate` fault). */
  before?: () => void;
  /** What an idempotent replay answers, when this step answers the request. */
  answer?: (row: HandoffRow) => Result<unknown>;
}

export async function commitStep(
  k: SessionKernel,
  store: HandoffStore,
  session: SessionRecord,
  step: Advanced,
  ctx: StepContext,
  options: StepOptions,
): Promise<HandoffRow> {
  let row: HandoffRow = { ...step.row, step: options.step, record: withDeadline(step) };
  const open = OPEN_STATUSES.includes(row.record.status);
  const base = { ...session, ...options.sessionPatch, in_flight_handoff: open ? inFlightOf(row.record) : null };
  const next = options.touch && session.status === "active" ? touch(base, ctx.now) : base;
  await k.commit(next, step.records, () => {
    options.before?.();
    row = applyEffects(k, store, step.effects, row, ctx);
    store.save(row, ctx.now);
    // Only a request with an Idempotency-Key has a row to answer.
    if (options.answer && row.record.idempotency_key !== undefined) store.answer(row.record.id, options.answer(row));
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

/** The effects that are SQL, inside the step's transaction. */
function applyEffects(k: SessionKernel, store: HandoffStore, effects: readonly HandoffEffect[], row: HandoffRow, ctx: StepContext): HandoffRow {
  let out = row;
  const id = row.record.id;
  // Read only by a release of the source's lease.
  let sessionLease: SessionLease | null | undefined;
  let nextLease: SessionLease | null | undefined;
  for (const effect of effects) {
    switch (effect.type) {
      case "schedule_timeout":
        k.timers.schedule("handoff.timeout", effect.at, { handoff_id: id }, { key: DEADLINE_KEY });
        break;
      case "cancel_timeout":
        k.timers.cancel(DEADLINE_KEY);
        break;
      case "interrupt_source":
        if (k.store.agentStatus()[effect.agent] === "busy") {
          k.store.setAgentStatus(effect.agent, "idle", ctx.now);
          k.outbox.append([turnInterrupted(ctx.scope, ctx.actor, ctx.now, { agent: effect.agent, handoff_id: id })]);
          out = { ...out, interrupted: true };
        }
        break;
      case "restore_source":
        if (out.interrupted && k.store.agentStatus()[effect.agent] === "idle") {
          k.store.setAgentStatus(effect.agent, "busy", ctx.now);
          k.outbox.append([turnRestored(ctx.scope, ctx.actor, ctx.now, { agent: effect.agent, handoff_id: id })]);
        }
        break;
      case "confirm_lease":
        // The target's lease becomes the session's, tentative until the AgentDO confirms it.
        if (out.lease) nextLease = { agent: effect.agent, ...out.lease, state: "tentative", capacity: out.capacity ?? DEFAULT_CAPACITY };
        break;
      case "release_lease":
        if (effect.agent === out.record.source && sessionLease === undefined) sessionLease = store.sessionLease();
        if (effect.agent === out.record.source && sessionLease?.agent === effect.agent) {
          store.queueRelease({ agent: effect.agent, lease_id: sessionLease.lease_id, fencing_token: sessionLease.fencing_token, reason: `handoff ${id} completed` });
          nextLease ??= null;
        } else if (effect.agent === out.record.target && out.lease) {
          store.queueRelease({ agent: effect.agent, ...out.lease, reason: `handoff ${id} rolled back` });
        }
        break;
      case "escalate":
        store.addInboxItem(escalation(out.record, ctx.now));
        break;
      case "take_lease":
      case "activate_target":
        // The flow's own awaited steps, recorded by `step`.
        break;
    }
  }
  if (nextLease !== undefined) store.setSessionLease(nextLease);
  return out;
}

function escalation(record: Handoff, now: number): InboxItem {
  return {
    id: `inb_${ulid(now).toLowerCase()}`,
    kind: "handoff_escalation",
    handoff_id: record.id,
    source_agent: record.source,
    target_agent: record.target,
    reason: record.request.reason,
    details: { timeout_s: record.request.timeout_s, summary: record.request.summary ?? null, task: record.request.task ?? null },
    created_at: new Date(now).toISOString(),
  };
}
