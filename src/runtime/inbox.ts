import { ulid } from "../lib/ulid";
import type { CollabMessage, Collaboration } from "../schemas/collaboration";
import type { ApprovalDecision, InboxItem, InboxKind } from "../schemas/inbox";

/** Inbox items and how they close, pure: the session's object stores them and audits each step. */

/** `inb_<ulid>_<session id>`: sorts by creation, and names the session a resolve must reach. */
export function newInboxId(sessionId: string, now: number): string {
  return `inb_${ulid(now).toLowerCase()}_${sessionId}`;
}

const INBOX_ID = /^inb_[0-9a-z]{26}_(ses_[0-9a-z]{52})$/;

/** The session an inbox id belongs to, or null when the id is not one Relay makes. */
export function sessionOfInboxItem(id: string): string | null {
  return INBOX_ID.exec(id)?.[1] ?? null;
}

export interface OpenItemInput {
  kind: InboxKind;
  session_id: string;
  agent: string | null;
  run_id?: string | null;
  handoff_id?: string | null;
  source_agent?: string | null;
  target_agent?: string | null;
  reason: string;
  details?: Record<string, unknown>;
  now: number;
  /** Epoch ms; null: never expires. */
  expires_at: number | null;
}

export function openItem(input: OpenItemInput): InboxItem {
  return {
    id: newInboxId(input.session_id, input.now),
    kind: input.kind,
    status: "open",
    session_id: input.session_id,
    agent: input.agent,
    run_id: input.run_id ?? null,
    handoff_id: input.handoff_id ?? null,
    source_agent: input.source_agent ?? null,
    target_agent: input.target_agent ?? null,
    reason: input.reason,
    details: input.details ?? {},
    created_at: new Date(input.now).toISOString(),
    expires_at: input.expires_at === null ? null : new Date(input.expires_at).toISOString(),
    resolved_at: null,
    resolved_by: null,
    reply: null,
    decision: null,
  };
}

/**
 * An open item, closed: answered (with the reply or decision and who gave it), expired or cancelled.
 * Null when it is not open.
 */
export function closeItem(
  item: InboxItem,
  outcome: "resolved" | "expired" | "cancelled",
  now: number,
  answer?: { reply?: string | null; decision?: ApprovalDecision | null; by: string },
): InboxItem | null {
  if (item.status !== "open") return null;
  return {
    ...item,
    status: outcome,
    resolved_at: new Date(now).toISOString(),
    resolved_by: answer?.by ?? null,
    reply: answer?.reply ?? null,
    decision: answer?.decision ?? null,
  };
}

/**
 * A collaboration's escalation in the inbox: `inb_<the message's ulid>_<collaboration id>`, so the
 * inbox API finds both.
 */
export function escalationInboxId(messageId: string, collaborationId: string): string {
  return `inb_${messageId.slice("cmsg_".length)}_${collaborationId}`;
}

const ESCALATION_ID = /^inb_([0-9a-z]{26})_(col_[0-9a-z]{26})$/;

/**
 * The collaboration and message an escalation's inbox id names, or null when it names a session's item
 * (or nothing).
 */
export function escalationOfInboxItem(id: string): { collaboration_id: string; message_id: string } | null {
  const match = ESCALATION_ID.exec(id);
  return match ? { collaboration_id: match[2]!, message_id: `cmsg_${match[1]}` } : null;
}

/** A collaboration's escalation as an inbox item (it lives in the collaboration, as its message). */
export function escalationItem(id: string, collaboration: Collaboration, message: CollabMessage): InboxItem {
  const status =
    message.status === "sent"
      ? "open"
      : message.status === "answered"
        ? "resolved"
        : message.status === "cancelled"
          ? "cancelled"
          : "expired";
  return {
    id,
    kind: "escalation",
    status,
    session_id: collaboration.id,
    agent: message.from,
    run_id: null,
    handoff_id: null,
    source_agent: null,
    target_agent: null,
    reason: message.subject ?? "escalation",
    details: { collaboration_id: collaboration.id, message_id: message.id, payload: message.payload },
    created_at: message.sent_at,
    expires_at: message.expires_at,
    resolved_at: null,
    resolved_by: message.resolved_by,
    reply: message.reply,
    decision: null,
  };
}
