import { collaborationEvent } from "../audit/collaboration-events";
import type { Actor, AuditRecord } from "../audit/record";
import { err, ok, type Result } from "../errors";
import { escalationInboxId } from "../runtime/inbox";
import { type CollabMessage, type CollabMessageInput, type Collaboration, REPLY_TYPES } from "../schemas/collaboration";
import { isOpen } from "./message-status";
import { newMessage } from "./messages";
import { movePhase, type NegotiationState, negotiated, phaseEvent } from "./phases";

/**
 * What a message sent to a collaboration changes (docs/collaboration.md): whether it is
 * accepted — both ends participants, a reply to a message that exists, a phase that allows it
 * — and, if so, the collaboration after it, the stored message, the open query it answers, and
 * the audit records of the one transaction that writes them. Pure: the object loads, calls
 * this, commits, then does the effects (the senders' waits).
 */

/** A collaboration as stored: its record without the message log. */
export type CollaborationRecord = Omit<Collaboration, "messages">;

export interface AcceptedMessage {
  next: CollaborationRecord;
  message: CollabMessage;
  /** The open query this message answers (a response or a cancel), which closes with it. */
  closes: CollabMessage | null;
  records: AuditRecord[];
}

export interface MessageContext {
  tenant: string;
  record: CollaborationRecord;
  /** The message `input.correlation_id` names, if the collaboration holds it. */
  answered: CollabMessage | null;
  /** The proposals made so far (negotiate messages' payloads by id), read only when a phase moves. */
  proposals: () => ReadonlyMap<string, Record<string, unknown>>;
  id: string;
  now: number;
}

export function acceptMessage(input: CollabMessageInput, ctx: MessageContext): Result<AcceptedMessage> {
  const { record, answered, id, now } = ctx;
  for (const [field, agent] of [
    ["from", input.from],
    ["to", input.to],
  ] as const) {
    if (agent !== undefined && !record.participants.includes(agent)) {
      return err("VALIDATION_FAILED", `'${agent}' is not a participant of this collaboration.`, {
        issues: [{ path: field, message: "must be a participant" }],
        participants: record.participants,
      });
    }
  }
  if (REPLY_TYPES.includes(input.type) && !answered) {
    return err("VALIDATION_FAILED", `No message '${input.correlation_id}' in this collaboration to answer.`, {
      issues: [{ path: "correlation_id", message: "must name a message of this collaboration" }],
    });
  }
  if (record.phase === "completion")
    return err("INVALID_TRANSITION", "The collaboration is complete: it takes no more messages.", {
      phase: record.phase,
    });
  const state: NegotiationState = { phase: record.phase, proposal_id: record.proposal_id, terms: record.terms };
  const event = phaseEvent(input, state);
  const moved = event ? movePhase(record.phase, event) : null;
  if (moved && !moved.ok) {
    return err("INVALID_TRANSITION", `A ${input.type} is not allowed in the ${record.phase} phase.`, {
      phase: record.phase,
      event,
      allowed: moved.allowed,
    });
  }
  const message = newMessage(input, record.id, id, now);
  let next: CollaborationRecord = { ...record, updated_at: new Date(now).toISOString() };
  if (event && moved?.ok) {
    const negotiation = negotiated(state, event, moved.phase, { id, payload: input.payload }, ctx.proposals());
    next = {
      ...next,
      phase: negotiation.phase,
      proposal_id: negotiation.proposal_id,
      terms: negotiation.terms,
      ...(event === "reject_final"
        ? { outcome: "rejected" as const }
        : event === "cancel"
          ? { outcome: "cancelled" as const }
          : {}),
    };
  }
  // A response (or a cancel) answers an open query: the query's sender stops waiting.
  const closes =
    answered?.type === "query" && isOpen(answered) && (input.type === "response" || input.type === "cancel")
      ? answered
      : null;
  return ok({ next, message, closes, records: messageRecords(input, ctx, next, message) });
}

/** The audit records of an accepted message: sent, the phase it moved, the inbox item of an escalation. */
function messageRecords(
  input: CollabMessageInput,
  { tenant, record, id, now }: MessageContext,
  next: CollaborationRecord,
  message: CollabMessage,
): AuditRecord[] {
  const actor: Actor = { actor: input.from, actor_type: "agent" };
  const records = [
    collaborationEvent(tenant, next, "collaboration.message_sent", actor, now, {
      message_id: id,
      type: input.type,
      from: input.from,
      to: input.to ?? null,
      priority: input.priority,
      correlation_id: input.correlation_id ?? null,
    }),
  ];
  if (next.phase !== record.phase)
    records.push(
      collaborationEvent(tenant, next, "collaboration.phase_changed", actor, now, {
        from: record.phase,
        to: next.phase,
        message_id: id,
      }),
    );
  // An escalation is a person's to answer: it is in the tenant's inbox (GET /v1/inbox) too.
  if (input.type === "escalate") {
    records.push(
      collaborationEvent(tenant, next, "inbox.item_created", actor, now, {
        inbox_id: escalationInboxId(id, record.id),
        kind: "escalation",
        agent: input.from,
        run_id: null,
        handoff_id: null,
        reason: input.subject ?? "escalation",
        expires_at: message.expires_at,
      }),
    );
  }
  return records;
}
