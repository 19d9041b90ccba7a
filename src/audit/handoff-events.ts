import type { HandoffMode, HandoffPolicy, HandoffStatus } from "../schemas/handoff";
import { type AuditScope, auditEvent } from "./events";
import type { Actor, AuditRecord } from "./record";

/**
 * Audit records of the handoff flow. Every transition of a handoff is one
 * `handoff.<status>` record; each carries what the D1 handoffs index needs (source,
 * target, mode, policy, creation time), so the index is a projection of the audit log and
 * reaches D1 in the same batch as the records (see handoff-index.ts).
 */

/** The fields of a handoff every transition record repeats. */
export interface HandoffSubject {
  id: string;
  source: string;
  target: string | null;
  mode: HandoffMode;
  policy: HandoffPolicy;
  /** ISO 8601 creation time of the handoff. */
  created_at: string;
}

/** One step of the state machine, as its `audit` effect describes it. */
export interface HandoffStepAudit {
  action: string;
  from: HandoffStatus | null;
  to: HandoffStatus;
  reason?: string;
}

export interface HandoffAuditExtra {
  /** The request's reason, on the `handoff.initiated` record only (it can be long). */
  request_reason?: string;
  /** The error code of a failure or rollback. */
  error_code?: string;
  /** Anything else the step wants on record (e.g. the inbox item of an escalation). */
  [key: string]: unknown;
}

/** The record of one transition: `agent` is the target once known, else the source. */
export function handoffTransitioned(
  scope: AuditScope,
  actor: Actor,
  now: number,
  subject: HandoffSubject,
  step: HandoffStepAudit,
  extra: HandoffAuditExtra = {},
): AuditRecord {
  const { request_reason, ...rest } = extra;
  const details: Record<string, unknown> = {
    from: step.from,
    to: step.to,
    source: subject.source,
    target: subject.target,
    mode: subject.mode,
    policy: subject.policy,
    created_at: subject.created_at,
    ...rest,
  };
  if (step.reason !== undefined) details.transition_reason = step.reason;
  if (request_reason !== undefined) details.reason = request_reason;
  return auditEvent(
    scope,
    { action: step.action, actor, agent: subject.target ?? subject.source, handoff_id: subject.id, details },
    now,
  );
}

/** An immediate handoff cut the source's turn short. */
export function turnInterrupted(
  scope: AuditScope,
  actor: Actor,
  now: number,
  details: { agent: string; handoff_id: string },
): AuditRecord {
  return auditEvent(
    scope,
    { action: "session.turn_interrupted", actor, agent: details.agent, handoff_id: details.handoff_id, details },
    now,
  );
}

/** A rolled-back handoff gave the source its interrupted turn back. */
export function turnRestored(
  scope: AuditScope,
  actor: Actor,
  now: number,
  details: { agent: string; handoff_id: string },
): AuditRecord {
  return auditEvent(
    scope,
    { action: "session.turn_restored", actor, agent: details.agent, handoff_id: details.handoff_id, details },
    now,
  );
}
