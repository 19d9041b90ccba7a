import { ulid } from "../lib/ulid";
import type { RouteDecision } from "../schemas/routing";
import type { Actor, AuditRecord } from "./record";

/**
 * Audit event constructors. Pure apart from the id: the caller passes the time, so the
 * record's `at` and the state change it describes carry the same instant.
 */

/** What every record of one session shares. */
export interface AuditScope {
  tenant: string;
  session_id: string | null;
}

export interface AuditEventInput {
  action: string;
  actor: Actor;
  agent?: string | null;
  handoff_id?: string | null;
  details?: Record<string, unknown>;
}

/** Columns of a record its details may name too (a builder's input often carries them). */
const COLUMNS = ["session_id", "handoff_id", "agent"] as const;

/**
 * Builds one record; the id is a ULID of `now`, so ids sort in time order. A detail that
 * repeats one of the record's columns is left out: D1 keeps every record for good, and
 * the column already says it.
 */
export function auditEvent(scope: AuditScope, event: AuditEventInput, now: number): AuditRecord {
  const record: AuditRecord = {
    id: ulid(now),
    at: new Date(now).toISOString(),
    tenant: scope.tenant,
    session_id: scope.session_id,
    handoff_id: event.handoff_id ?? null,
    action: event.action,
    agent: event.agent ?? null,
    actor: event.actor.actor,
    actor_type: event.actor.actor_type,
    details: event.details ?? {},
  };
  if (COLUMNS.some((column) => column in record.details)) {
    const details = { ...record.details };
    for (const column of COLUMNS) if (column in details && details[column] === record[column]) delete details[column];
    record.details = details;
  }
  return record;
}

export function sessionCreated(
  scope: AuditScope,
  actor: Actor,
  now: number,
  details: { agent: string; ttl_s: number; metadata: Record<string, unknown>; routed: boolean },
): AuditRecord {
  return auditEvent(scope, { action: "session.created", actor, agent: details.agent, details }, now);
}

/**
 * The router's decision, recorded as the system's act (the router chose, not the caller).
 * The record keeps what was decided and how sure the router was; the session's trace keeps
 * the whole decision (docs/sessions.md). Left out here: the explanation (the terms and
 * examples that weighed, a long text), each candidate's matched terms (the chosen one's
 * are the decision's own), and the agents a fallback listed (their titles and descriptions
 * are the registry's).
 */
export function routeDecided(
  scope: AuditScope,
  now: number,
  decision: Partial<RouteDecision> & Pick<RouteDecision, "agent">,
): AuditRecord {
  const {
    explanation: _explanation,
    candidates,
    fallback,
    ...details
  } = decision as Partial<RouteDecision> & Record<string, unknown>;
  if (candidates) details.candidates = candidates.map(({ agent, score, confidence }) => ({ agent, score, confidence }));
  if (fallback) details.fallback = { strategy: fallback.strategy, reason: fallback.reason };
  return auditEvent(
    scope,
    { action: "route.decided", actor: { actor: "router", actor_type: "system" }, agent: decision.agent, details },
    now,
  );
}

/**
 * A message was stored. `agent` is the agent the message concerns: its author, or for a
 * user's message the agent it was addressed to (the current one). The content stays in
 * the session; the audit trail records that a message happened.
 */
export function messageAdded(
  scope: AuditScope,
  actor: Actor,
  now: number,
  agent: string,
  details: { message_id: string; seq: number; role: string; author: string | null; chars: number },
): AuditRecord {
  return auditEvent(scope, { action: "session.message_added", actor, agent, details }, now);
}

export function stateUpdated(
  scope: AuditScope,
  actor: Actor,
  now: number,
  details: { agent: string; set: string[]; unset: string[] },
): AuditRecord {
  return auditEvent(scope, { action: "session.state_updated", actor, agent: details.agent, details }, now);
}

export function agentStatusChanged(
  scope: AuditScope,
  actor: Actor,
  now: number,
  details: { agent: string; from: string | null; to: string },
): AuditRecord {
  return auditEvent(scope, { action: "session.agent_status_changed", actor, agent: details.agent, details }, now);
}

export function sessionDeleted(scope: AuditScope, actor: Actor, now: number, details: { agent: string }): AuditRecord {
  return auditEvent(scope, { action: "session.deleted", actor, agent: details.agent, details }, now);
}

export function sessionExpired(
  scope: AuditScope,
  actor: Actor,
  now: number,
  details: { agent: string; expires_at: string; idle_s: number },
): AuditRecord {
  return auditEvent(scope, { action: "session.expired", actor, agent: details.agent, details }, now);
}
