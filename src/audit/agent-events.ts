import { ulid } from "../lib/ulid";
import { auditEvent } from "./events";
import { API_ACTOR, type AuditRecord } from "./record";

/**
 * The audit records of the tenant's registry writes (docs/agents.md, Audit): `agent.created`,
 * `agent.updated`, `agent.deleted`, tenant-level (no session), made by the API's caller.
 * The router object writes an intent before the registry write and turns it into its record
 * after (durable-objects/router/agent-audit.ts); what the record says is decided here.
 */

/** A registry write about to be made: what its record will say if it lands. */
export interface AgentWriteIntent {
  /** The record's id, chosen before the write. */
  id: string;
  /** The write's time (ms): the record's, and the `updated_at` a put writes. */
  at: number;
  tenant: string;
  agent: string;
  kind: "put" | "delete";
  /** The registry held the agent before the write. */
  existed: boolean;
  /** A put over an existing agent: the top-level fields of its definition it changes (names only). */
  changed: string[] | null;
}

/** How a write ended: refused or not made (nothing to record), or made at `registry_version`. */
export type AgentWriteOutcome =
  | { landed: false }
  | {
      landed: true;
      created: boolean;
      registry_version: number;
      /** Found by recovery after a crash: the version is the registry's when it was found (the write's or later). */
      recovered: boolean;
    };

/** What the registry holds of an intent's agent, read to settle an intent a crash left. */
export interface RegistryObservation {
  agent: { created_at: string; updated_at: string } | null;
  registry_version: number;
}

/**
 * The intent of a put (`after` the new definition's stored text) or a delete (`after` null) of
 * `agent`, whose stored text before the write is `before` (null: none).
 */
export function agentWriteIntent(
  tenant: string,
  agent: string,
  at: number,
  before: string | null,
  after: string | null,
): AgentWriteIntent {
  return {
    id: ulid(at),
    at,
    tenant,
    agent,
    kind: after === null ? "delete" : "put",
    existed: before !== null,
    changed: before !== null && after !== null ? changedFields(JSON.parse(before), JSON.parse(after)) : null,
  };
}

/**
 * Top-level fields whose values differ between two definitions, present in either, in name
 * order. Names only: a definition may hold thousands of examples, and the registry keeps them.
 */
export function changedFields(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return names.filter((name) => !sameJson(before[name], after[name]));
}

/** Equal as JSON values, whatever the order of object keys. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => sameJson(item, b[i]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left).filter((k) => left[k] !== undefined);
  if (keys.length !== Object.keys(right).filter((k) => right[k] !== undefined).length) return false;
  return keys.every((k) => Object.hasOwn(right, k) && sameJson(left[k], right[k]));
}

/**
 * Whether the intent's write landed, from the registry read after a crash: a put wrote its
 * own time as the agent's `updated_at` (the router object writes one agent at a time, and
 * settles a crash's intent before its next write); a delete landed when an agent that was
 * there is gone.
 */
export function recoveredOutcome(intent: AgentWriteIntent, seen: RegistryObservation): AgentWriteOutcome {
  const at = new Date(intent.at).toISOString();
  if (intent.kind === "put") {
    if (seen.agent === null || seen.agent.updated_at !== at) return { landed: false };
    return {
      landed: true,
      created: seen.agent.created_at === at,
      registry_version: seen.registry_version,
      recovered: true,
    };
  }
  if (!intent.existed || seen.agent !== null) return { landed: false };
  return { landed: true, created: false, registry_version: seen.registry_version, recovered: true };
}

/**
 * The record of a write that landed, or null. A put that changes nothing is still a write (the
 * registry's version and the agent's `updated_at` move): it is recorded as `agent.updated`
 * with `changed: []`, so every version an agent write made has its record.
 */
export function agentWriteRecord(intent: AgentWriteIntent, outcome: AgentWriteOutcome): AuditRecord | null {
  if (!outcome.landed) return null;
  const action = intent.kind === "delete" ? "agent.deleted" : outcome.created ? "agent.created" : "agent.updated";
  const details: Record<string, unknown> = { registry_version: outcome.registry_version };
  if (action === "agent.updated" && intent.changed !== null) details.changed = intent.changed;
  if (outcome.recovered) details.recovered = true;
  const record = auditEvent(
    { tenant: intent.tenant, session_id: null },
    { action, actor: API_ACTOR, agent: intent.agent, details },
    intent.at,
  );
  return { ...record, id: intent.id };
}
