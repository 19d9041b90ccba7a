import type { CollabMessage } from "../schemas/collaboration";

/**
 * What becomes of a collaboration message once sent, as a transition table. Every message
 * starts `sent`; one event closes it, and a closed message takes no further event (a late
 * response to a query that timed out changes nothing). The error code a closing event leaves
 * on the message is decided here too, so the object only stores what this returns.
 */

export type MessageStatus = CollabMessage["status"];

/**
 * - `respond`: a response answers the query it correlates to;
 * - `cancel`: a cancel withdraws the query it correlates to;
 * - `resolve`: a person answers an escalation;
 * - `break_deadlock`: the deadlock detector ends the wait at this query;
 * - `time_out`: a query's or an escalation's timeout ran out (its sender waited);
 * - `expire`: any other message's ttl ran out unanswered (see {@link deadlineChange}).
 */
export type MessageEvent = "respond" | "cancel" | "resolve" | "break_deadlock" | "time_out" | "expire";

export const MESSAGE_TRANSITIONS: Readonly<Record<MessageStatus, Partial<Record<MessageEvent, MessageStatus>>>> = {
  sent: {
    respond: "answered",
    cancel: "cancelled",
    resolve: "answered",
    break_deadlock: "timed_out",
    time_out: "timed_out",
    expire: "expired",
  },
  answered: {},
  expired: {},
  timed_out: {},
  cancelled: {},
};

/** Every message is sent in this status. */
export const INITIAL_MESSAGE_STATUS: MessageStatus = "sent";

/** Whether a message still waits for something (only a `sent` one does). */
export const isOpen = (message: Pick<CollabMessage, "status">): boolean =>
  Object.keys(MESSAGE_TRANSITIONS[message.status]).length > 0;

/** A message whose sender waits for an answer: its deadline is a timeout, not a ttl. */
const waitsForAnswer = (message: Pick<CollabMessage, "type">) =>
  message.type === "query" || message.type === "escalate";

export type MessageChange =
  | { event: "respond" | "cancel"; by: string }
  | { event: "resolve"; reply: string; by: string }
  | { event: "break_deadlock"; code: string }
  | { event: "time_out" | "expire" };

/** What a message's deadline means: a wait timed out, or an unanswered message dropped. */
export function deadlineChange(message: Pick<CollabMessage, "type">): MessageChange {
  return { event: waitsForAnswer(message) ? "time_out" : "expire" };
}

/** The message after `change`, or null when its status takes no such event (it is closed). */
export function closeMessage(message: CollabMessage, change: MessageChange): CollabMessage | null {
  const to = MESSAGE_TRANSITIONS[message.status][change.event];
  if (to === undefined) return null;
  switch (change.event) {
    case "respond":
      return { ...message, status: to, answered_by: change.by, error: null };
    case "cancel":
      return { ...message, status: to, answered_by: change.by, error: "cancelled" };
    case "resolve":
      return { ...message, status: to, reply: change.reply, resolved_by: change.by };
    case "break_deadlock":
      return { ...message, status: to, error: change.code };
    case "time_out":
      return { ...message, status: to, error: message.type === "query" ? "QUERY_TIMEOUT" : "HUMAN_TIMEOUT" };
    case "expire":
      return { ...message, status: to, error: null };
  }
}

/** The audit action a message's deadline is recorded under. */
export function deadlineAction(message: Pick<CollabMessage, "type">): string {
  if (message.type === "query") return "collaboration.query_timed_out";
  if (message.type === "escalate") return "collaboration.escalation_timed_out";
  return "collaboration.message_expired";
}

/** Whether the sender of a closed message was blocked on it (and must be unblocked). */
export const unblocksSender = waitsForAnswer;
