import type { CollabMessageInput, CollabPhase } from "../schemas/collaboration";

/**
 * A collaboration's phases as a transition table (docs/collaboration.md, Phases): discovery →
 * negotiation → agreement → execution → completion. Messages move it: a `negotiate`
 * proposes terms (and a counter-proposal is another `negotiate`), an `acknowledge` of the
 * proposal on the table accepts it, a `reject` of it sends the parties back to negotiating
 * (or ends the collaboration when it says `final: true`), the first `request` after an
 * agreement starts the work, `cancel` ends it from any phase but the last, and completion
 * is asked for explicitly. A message whose event the table refuses is refused with it.
 */

export type PhaseEvent = "propose" | "accept" | "reject" | "reject_final" | "start" | "complete" | "cancel";

export const PHASE_TRANSITIONS: Readonly<Record<CollabPhase, Partial<Record<PhaseEvent, CollabPhase>>>> = {
  discovery: { propose: "negotiation", cancel: "completion" },
  negotiation: {
    propose: "negotiation",
    accept: "agreement",
    reject: "negotiation",
    reject_final: "completion",
    cancel: "completion",
  },
  agreement: { start: "execution", propose: "negotiation", complete: "completion", cancel: "completion" },
  execution: { complete: "completion", cancel: "completion" },
  completion: {},
};

/** What the collaboration keeps of a negotiation: the proposal on the table and the terms agreed. */
export interface NegotiationState {
  phase: CollabPhase;
  /** The id of the `negotiate` message whose terms are on the table. */
  proposal_id: string | null;
  /** The terms accepted (the proposal's payload), once agreed. */
  terms: Record<string, unknown> | null;
}

/** The phase event a message is (null: it does not move the phase), given what is on the table. */
export function phaseEvent(
  message: Pick<CollabMessageInput, "type" | "correlation_id" | "payload">,
  state: NegotiationState,
): PhaseEvent | null {
  switch (message.type) {
    case "negotiate":
      return "propose";
    case "acknowledge":
      return state.proposal_id !== null && message.correlation_id === state.proposal_id ? "accept" : null;
    case "reject":
      if (state.proposal_id === null || message.correlation_id !== state.proposal_id) return null;
      return message.payload.final === true ? "reject_final" : "reject";
    case "request":
      return state.phase === "agreement" ? "start" : null;
    case "cancel":
      return message.correlation_id === undefined ? "cancel" : null;
    default:
      return null;
  }
}

export type PhaseMove =
  | { ok: true; phase: CollabPhase }
  | { ok: false; from: CollabPhase; event: PhaseEvent; allowed: PhaseEvent[] };

export function movePhase(phase: CollabPhase, event: PhaseEvent): PhaseMove {
  const next = PHASE_TRANSITIONS[phase][event];
  return next
    ? { ok: true, phase: next }
    : { ok: false, from: phase, event, allowed: Object.keys(PHASE_TRANSITIONS[phase]) as PhaseEvent[] };
}

/** The negotiation after a message that moved the phase (`id` is the message's). */
export function negotiated(
  state: NegotiationState,
  event: PhaseEvent,
  next: CollabPhase,
  message: { id: string; payload: Record<string, unknown> },
  proposals: ReadonlyMap<string, Record<string, unknown>>,
): NegotiationState {
  switch (event) {
    case "propose":
      return { phase: next, proposal_id: message.id, terms: null };
    case "accept":
      return { phase: next, proposal_id: state.proposal_id, terms: proposals.get(state.proposal_id!) ?? {} };
    case "reject":
    case "reject_final":
      return { phase: next, proposal_id: null, terms: null };
    default:
      return { ...state, phase: next };
  }
}
