import { type AuditScope, auditEvent } from "./events";
import type { Actor, AuditRecord } from "./record";

/**
 * Audit records of a session's memory of facts (docs/memory.md, Facts): which key was written
 * or deleted, by whom, about which agent's conversation. Never the value: a fact may be
 * personal data, and D1 keeps every record for good; the value stays in the session's object.
 */

/** A fact was written (new, or a key written again); `agent` is the session's current agent. */
export function factWritten(
  scope: AuditScope,
  actor: Actor,
  now: number,
  fact: { agent: string; key: string },
): AuditRecord {
  return auditEvent(
    scope,
    { action: "memory.fact_written", actor, agent: fact.agent, details: { key: fact.key } },
    now,
  );
}

/** A fact was deleted (`forget`, or a person through the API). */
export function factDeleted(
  scope: AuditScope,
  actor: Actor,
  now: number,
  fact: { agent: string; key: string },
): AuditRecord {
  return auditEvent(
    scope,
    { action: "memory.fact_deleted", actor, agent: fact.agent, details: { key: fact.key } },
    now,
  );
}
