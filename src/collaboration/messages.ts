import { type CollabMessage, type CollabMessageInput, DEFAULT_ESCALATION_TIMEOUT_S } from "../schemas/collaboration";
import { INITIAL_MESSAGE_STATUS } from "./message-status";

/** A query's wait for its response when it names none. */
export const DEFAULT_QUERY_TIMEOUT_S = 30;

/**
 * How long a message waits, in seconds: a query and an escalation for their answer (their
 * `timeout_s`, else the default), any other message for its `ttl_s` if it has one.
 */
export function messageWaitS(input: Pick<CollabMessageInput, "type" | "timeout_s" | "ttl_s">): number | undefined {
  if (input.type === "query") return input.timeout_s ?? DEFAULT_QUERY_TIMEOUT_S;
  if (input.type === "escalate") return input.timeout_s ?? DEFAULT_ESCALATION_TIMEOUT_S;
  return input.ttl_s;
}

/** A message as sent: numbered when the log takes it (`seq` 0 until then), open, with its deadline. */
export function newMessage(input: CollabMessageInput, collaborationId: string, id: string, now: number): CollabMessage {
  const waitS = messageWaitS(input);
  return {
    id,
    seq: 0,
    collaboration_id: collaborationId,
    type: input.type,
    from: input.from,
    to: input.to ?? null,
    subject: input.subject ?? null,
    payload: input.payload,
    priority: input.priority,
    correlation_id: input.correlation_id ?? null,
    status: INITIAL_MESSAGE_STATUS,
    sent_at: new Date(now).toISOString(),
    expires_at: waitS === undefined ? null : new Date(now + waitS * 1000).toISOString(),
    answered_by: null,
    error: null,
    reply: null,
    resolved_by: null,
  };
}

/**
 * What a sent message makes its sender wait for: a query, its answer; an escalation (unless `blocking:
 * false`), a person.
 */
export function senderWait(
  input: Pick<CollabMessageInput, "type" | "to" | "subject" | "payload">,
): { kind: "internal" | "user"; to: string; reason: string } | null {
  if (input.type === "query") return { kind: "internal", to: input.to!, reason: input.subject ?? "query" };
  if (input.type === "escalate" && input.payload.blocking !== false)
    return { kind: "user", to: "user", reason: input.subject ?? "escalation" };
  return null;
}

/**
 * A broadcast that names `capabilities` (strings) asks which participants have them; its
 * payload may also name agents to `exclude` and a `min_score`. Null when it names none.
 */
export function capabilityMatchOf(
  payload: Record<string, unknown>,
): { capabilities: string[]; options: { exclude: string[]; min_score: number } } | null {
  const { capabilities, exclude, min_score } = payload;
  if (!Array.isArray(capabilities) || !capabilities.every((c) => typeof c === "string")) return null;
  return {
    capabilities,
    options: {
      exclude: Array.isArray(exclude) ? exclude.filter((e): e is string => typeof e === "string") : [],
      min_score: typeof min_score === "number" ? min_score : 0,
    },
  };
}
