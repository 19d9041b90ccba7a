import * as z from "zod";
import type { ErrorBody } from "../errors";
import type { HandoffPolicy, HandoffStatus, OnTimeout } from "../schemas/handoff";

/**
 * The handoff state machine (docs/handoffs.md, Statuses) as a data table from (status, command) to the
 * next status and the effects to run. `transition()` is pure and executes nothing
 * (xstate's `transition(state, event) → [next, actions]`): the SessionDO persists `next`
 * with the audit effects in one transaction, then performs the other effects in order.
 *
 *   initiated → validating → [pending: graceful, waits for source idle] → transferring → completed
 *   validating → failed        transferring → rolled_back
 *   pending → timed_out → failed | escalated (per on_timeout)        pending → cancelled
 */

export const HandoffCommand = z.enum([
  "validate",
  "wait",
  "transfer",
  "complete",
  "fail",
  "roll_back",
  "time_out",
  "cancel",
  "escalate",
]);
export type HandoffCommand = z.infer<typeof HandoffCommand>;

/** Dotted past-tense audit actions, one per status entered (the lead's list). */
export const HANDOFF_AUDIT_ACTIONS = {
  initiated: "handoff.initiated",
  validating: "handoff.validated",
  pending: "handoff.pending",
  transferring: "handoff.transferring",
  completed: "handoff.completed",
  failed: "handoff.failed",
  rolled_back: "handoff.rolled_back",
  timed_out: "handoff.timed_out",
  cancelled: "handoff.cancelled",
  escalated: "handoff.escalated",
} as const satisfies Record<HandoffStatus, string>;
export type HandoffAuditAction = (typeof HANDOFF_AUDIT_ACTIONS)[HandoffStatus];

/**
 * Effects are data, and the glue carries out every one of them, in the order given:
 * the synchronous ones inside the step's storage transaction, `take_lease` (an RPC to the
 * target's AgentDO) after it. Lease effects appear only when there is a lease to take,
 * hold or free, so an agent without a capacity limit costs no lease round trip.
 */
export type HandoffEffect =
  /** Exactly one per transition; written in the same storage transaction as the status. */
  | { type: "audit"; action: HandoffAuditAction; from: HandoffStatus | null; to: HandoffStatus; reason?: string }
  /** Arm the graceful timeout (epoch ms). */
  | { type: "schedule_timeout"; at: number }
  | { type: "cancel_timeout" }
  /** Immediate policy only: end the source's turn in progress. */
  | { type: "interrupt_source"; agent: string }
  /** Take a tentative capacity lease in the target's AgentDO, before the switch. */
  | { type: "take_lease"; agent: string; capacity: number }
  /** The switch: the target becomes the current agent (stack, context, history). */
  | { type: "activate_target"; agent: string }
  /** The target's granted lease becomes the session's (confirmed in its AgentDO after the commit). */
  | { type: "hold_target_lease"; agent: string }
  /** Free the lease the source held for the session. */
  | { type: "release_source_lease"; agent: string }
  /** Free the lease granted to the target (the handoff did not happen). */
  | { type: "release_target_lease"; agent: string }
  /** Give the source back the turn an immediate handoff interrupted. */
  | { type: "restore_source"; agent: string }
  /** Write an escalation record in the session's inbox (docs/handoffs.md, Policies). */
  | { type: "escalate"; source: string; target: string | null };

type EffectTemplate = Exclude<HandoffEffect["type"], "audit">;

interface Cell {
  to: HandoffStatus;
  /** Run after the audit effect, in this order (each only when it applies: see `resolve`). */
  effects: readonly EffectTemplate[];
}

/** The whole machine. A (status, command) pair that is absent is refused. */
export const HANDOFF_TABLE: Readonly<Record<HandoffStatus, Partial<Record<HandoffCommand, Cell>>>> = {
  initiated: {
    validate: { to: "validating", effects: [] },
  },
  validating: {
    wait: { to: "pending", effects: ["schedule_timeout"] },
    transfer: { to: "transferring", effects: ["interrupt_source", "take_lease"] },
    // Nothing was changed yet, so there is nothing to undo.
    fail: { to: "failed", effects: [] },
  },
  pending: {
    // The source reported idle: no turn to interrupt.
    transfer: { to: "transferring", effects: ["cancel_timeout", "take_lease"] },
    // The timer has fired; `commandAfterTimeout(on_timeout)` says what follows.
    time_out: { to: "timed_out", effects: [] },
    cancel: { to: "cancelled", effects: ["cancel_timeout"] },
  },
  transferring: {
    complete: { to: "completed", effects: ["activate_target", "hold_target_lease", "release_source_lease"] },
    roll_back: { to: "rolled_back", effects: ["release_target_lease", "restore_source"] },
  },
  timed_out: {
    fail: { to: "failed", effects: [] },
    escalate: { to: "escalated", effects: ["escalate"] },
  },
  completed: {},
  failed: {},
  rolled_back: {},
  cancelled: {},
  escalated: {},
};

/** The part of a handoff the machine reads. */
export interface HandoffMachineState {
  status: HandoffStatus;
  policy: HandoffPolicy;
  source: string;
  /** Null until validation chose it; `transfer` refuses a null target. */
  target: string | null;
  /** Graceful timeout; `wait` schedules it at now + timeout_s. */
  timeout_s: number;
  /** The target's max_concurrent_sessions; null: no limit, so no lease. */
  target_capacity: number | null;
  /** A lease was granted to the target for this handoff. */
  target_leased: boolean;
  /** The source holds a lease for the session. */
  source_leased: boolean;
  /** The immediate policy ended the source's turn. */
  interrupted: boolean;
}

/** A command; `wait` needs the current time (epoch ms) to schedule its timeout. */
export type HandoffCommandInput =
  | { type: "wait"; now: number; reason?: string }
  | { type: Exclude<HandoffCommand, "wait">; reason?: string };

export type TransitionResult =
  | { ok: true; next: HandoffStatus; effects: HandoffEffect[] }
  | { ok: false; error: ErrorBody };

/** The effects of creating a handoff: it starts `initiated`, audited like every step. */
export function initiate(reason?: string): { next: "initiated"; effects: HandoffEffect[] } {
  return { next: "initiated", effects: [audit(null, "initiated", reason)] };
}

/** Commands the table accepts from a status (the policy guard on `wait` aside). */
export function allowedCommands(status: HandoffStatus): HandoffCommand[] {
  return Object.keys(HANDOFF_TABLE[status]) as HandoffCommand[];
}

/** What follows `time_out`: the request's `on_timeout` decides. */
export function commandAfterTimeout(onTimeout: OnTimeout): "fail" | "escalate" {
  return onTimeout === "escalate" ? "escalate" : "fail";
}

/**
 * One step of the machine. Refusals: `cancel` outside `pending` → HANDOFF_NOT_CANCELLABLE;
 * any other absent cell, `wait` under the immediate policy, or `transfer` with no target
 * chosen → INVALID_TRANSITION (a stale timer or a late report; the DO ignores it).
 */
export function transition(state: HandoffMachineState, command: HandoffCommandInput): TransitionResult {
  const row = HANDOFF_TABLE[state.status];
  // Own keys only, so a command name read from storage can never hit Object.prototype.
  const cell = Object.hasOwn(row, command.type) ? row[command.type] : undefined;
  if (!cell) {
    if (command.type === "cancel") {
      return refuse({
        code: "HANDOFF_NOT_CANCELLABLE",
        message: `A ${state.status} handoff cannot be cancelled; only a pending one can.`,
        details: { status: state.status },
      });
    }
    return refuse(invalid(state.status, command.type, `'${command.type}' is not possible from '${state.status}'`));
  }
  if (command.type === "wait" && state.policy === "immediate") {
    return refuse(invalid(state.status, command.type, "an immediate handoff does not wait for the source"));
  }
  if (state.target === null && cell.effects.some((t) => READS_TARGET.has(t))) {
    return refuse(invalid(state.status, command.type, "no target has been chosen"));
  }
  const effects: HandoffEffect[] = [audit(state.status, cell.to, command.reason)];
  for (const template of cell.effects) {
    const effect = resolve(template, state, command);
    if (effect) effects.push(effect);
  }
  return { ok: true, next: cell.to, effects };
}

const READS_TARGET: ReadonlySet<EffectTemplate> = new Set([
  "take_lease",
  "activate_target",
  "hold_target_lease",
  "release_target_lease",
]);

/** The effect a template stands for in this state, or null when it does not apply. */
function resolve(
  template: EffectTemplate,
  state: HandoffMachineState,
  command: HandoffCommandInput,
): HandoffEffect | null {
  // Non-null whenever a READS_TARGET template runs: transition() refuses otherwise.
  const target = state.target!;
  switch (template) {
    case "schedule_timeout":
      return { type: "schedule_timeout", at: (command as { now: number }).now + state.timeout_s * 1000 };
    case "cancel_timeout":
      return { type: "cancel_timeout" };
    case "interrupt_source":
      return state.policy === "immediate" ? { type: "interrupt_source", agent: state.source } : null;
    case "take_lease":
      return state.target_capacity === null
        ? null
        : { type: "take_lease", agent: target, capacity: state.target_capacity };
    case "activate_target":
      return { type: "activate_target", agent: target };
    case "hold_target_lease":
      return state.target_leased ? { type: "hold_target_lease", agent: target } : null;
    case "release_source_lease":
      return state.source_leased ? { type: "release_source_lease", agent: state.source } : null;
    case "release_target_lease":
      return state.target_leased ? { type: "release_target_lease", agent: target } : null;
    case "restore_source":
      return state.interrupted ? { type: "restore_source", agent: state.source } : null;
    case "escalate":
      return { type: "escalate", source: state.source, target: state.target };
  }
}

function audit(from: HandoffStatus | null, to: HandoffStatus, reason?: string): HandoffEffect {
  const action = HANDOFF_AUDIT_ACTIONS[to];
  return reason === undefined ? { type: "audit", action, from, to } : { type: "audit", action, from, to, reason };
}

function invalid(status: HandoffStatus, command: HandoffCommand, why: string): ErrorBody {
  return {
    code: "INVALID_TRANSITION",
    message: `Handoff transition refused: ${why}.`,
    details: { status, command, allowed_commands: allowedCommands(status) },
  };
}

function refuse(error: ErrorBody): TransitionResult {
  return { ok: false, error };
}
