import type { InboxKind } from "../schemas/inbox";
import { PAUSED_RUN_STATUSES, type RunStatus } from "../schemas/run";
import { type AuditScope, auditEvent } from "./events";
import type { Actor, AuditRecord } from "./record";

/**
 * Audit records of runs and the inbox. Content (messages, replies, tool arguments) stays
 * in the session; the audit trail records that the step happened, who and what it concerned.
 */

const PAUSED: ReadonlySet<RunStatus> = new Set(PAUSED_RUN_STATUSES);

export function runStarted(
  scope: AuditScope,
  actor: Actor,
  now: number,
  details: { run_id: string; agent: string; message_id: string },
): AuditRecord {
  return auditEvent(scope, { action: "run.started", actor, agent: details.agent, details }, now);
}

/** A run ended, paused (for a person or the client) or resumed. */
export function runStatusChanged(
  scope: AuditScope,
  actor: Actor,
  now: number,
  details: { run_id: string; agent: string; from: RunStatus; to: RunStatus; turns: number; error_code?: string },
): AuditRecord {
  const action = PAUSED.has(details.to)
    ? "run.paused"
    : PAUSED.has(details.from) && details.to === "running"
      ? "run.resumed"
      : `run.${details.to}`;
  return auditEvent(scope, { action, actor, agent: details.agent, details }, now);
}

/**
 * An agent's handoff tool call that was refused (an accepted one is named on the handoff's
 * `handoff.initiated` record: its run and tool).
 */
export function handoffToolCalled(
  scope: AuditScope,
  actor: Actor,
  now: number,
  details: {
    run_id: string;
    agent: string;
    tool_name: string;
    target: string | null;
    accepted: boolean;
    error_code?: string;
  },
): AuditRecord {
  return auditEvent(scope, { action: "run.handoff_requested", actor, agent: details.agent, details }, now);
}

/** An item was put in the human inbox. */
export function inboxItemCreated(
  scope: AuditScope,
  actor: Actor,
  now: number,
  details: {
    inbox_id: string;
    kind: InboxKind;
    agent: string | null;
    run_id: string | null;
    handoff_id: string | null;
    /** Never a tool call's arguments (docs/sessions.md, Audit). */
    reason: string;
    tool_name?: string;
    expires_at: string | null;
  },
): AuditRecord {
  return auditEvent(
    scope,
    { action: "inbox.item_created", actor, agent: details.agent, handoff_id: details.handoff_id, details },
    now,
  );
}

/** An inbox item closed: answered by a person, expired unanswered, or cancelled with its session. */
export function inboxItemClosed(
  scope: AuditScope,
  actor: Actor,
  now: number,
  details: {
    inbox_id: string;
    agent: string | null;
    outcome: "resolved" | "expired" | "cancelled";
    resolved_by: string | null;
  },
): AuditRecord {
  return auditEvent(scope, { action: `inbox.item_${details.outcome}`, actor, agent: details.agent, details }, now);
}
