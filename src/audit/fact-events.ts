import { type AuditScope, auditEvent } from "./events";
import type { Actor, AuditRecord } from "./record";

/**
 * Audit records of a session's memory of facts (docs/memory.md, Facts): which key was written
 * or deleted, by whom, about which agent's conversation. Never the value: a fact may be
 * personal data, and D1 keeps every record for good; the value stays in the session's object.
 */

/** What a fact's record concerns: the session's current agent, and the key. */
type FactAbout = { agent: string; key: string };

function factRecord(action: string, scope: AuditScope, actor: Actor, now: number, fact: FactAbout): AuditRecord {
  return auditEvent(scope, { action, actor, agent: fact.agent, details: { key: fact.key } }, now);
}

/** A fact was written (new, or a key written again); `agent` is the session's current agent. */
export const factWritten = (scope: AuditScope, actor: Actor, now: number, fact: FactAbout): AuditRecord =>
  factRecord("memory.fact_written", scope, actor, now, fact);

/** A fact was deleted (`forget`, or a person through the API). */
export const factDeleted = (scope: AuditScope, actor: Actor, now: number, fact: FactAbout): AuditRecord =>
  factRecord("memory.fact_deleted", scope, actor, now, fact);
