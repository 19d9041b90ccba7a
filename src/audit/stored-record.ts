/**
 * How a record's ids are kept in D1. Run, inbox and handoff ids embed their session's id
 * (`run_<ulid>_<session id>`); in a record that has that session in its own column, the
 * copy is left out on write and put back on read, so readers never see the short form.
 * A record's `at` is stored only when it is not its id's time (migration 0016), and a
 * handoff transition's `created_at` is left out too when it is its handoff id's own time
 * (the id is a ULID of the creation), and derived again on read. Together about a tenth of a
 * conversation's D1 bytes (docs/benchmarks.md, The cost of a conversation). Rows written
 * before keep their full form, which reads back unchanged.
 */

import type { AuditRecord } from "./record";
import { idTime } from "./retention";

/** audit_log's columns, in the order statements name them. */
export const STORED_COLUMNS = [
  "id",
  "at",
  "tenant",
  "session_id",
  "handoff_id",
  "action",
  "agent",
  "actor",
  "actor_type",
  "details",
] as const;

/** A record, or a row read back as stored, whose `at` may be left to its id. */
export type RecordOrRow = Omit<AuditRecord, "at"> & { at: string | null };

/** An audit_log row as written: the record's columns in their stored form. */
export type StoredRow = Omit<RecordOrRow, "details"> & { details: string };

/** The row D1 keeps for `record` (a row read back as it is stored comes out the same). */
export function storedRow(record: RecordOrRow): StoredRow {
  return {
    id: record.id,
    at: storedAt(record.id, record.at),
    tenant: record.tenant,
    session_id: record.session_id,
    handoff_id: shortId(record.handoff_id, record.session_id),
    action: record.action,
    agent: record.agent,
    actor: record.actor,
    actor_type: record.actor_type,
    details: storedDetails(record.details, record.session_id, fullId(record.handoff_id, record.session_id)),
  };
}

/** A row's values in STORED_COLUMNS order. */
export function storedValues(row: StoredRow): (string | null)[] {
  return STORED_COLUMNS.map((column) => row[column]);
}

/** The record a stored row holds, as readers know it. */
export function readRow(row: StoredRow): AuditRecord {
  const handoffId = fullId(row.handoff_id, row.session_id);
  return {
    ...row,
    at: readAt(row.id, row.at),
    handoff_id: handoffId,
    details: readDetails(row.details, row.session_id, handoffId),
  };
}

/** A record's time as stored: null when it is its id's own time (nearly always), which readers derive. */
export function storedAt(id: string, at: string | null): string | null {
  return at === idTimeIso(id) ? null : at;
}

/** A stored time as readers know it. */
export function readAt(id: string, at: string | null): string {
  return at ?? idTimeIso(id);
}

const idTimeIso = (id: string) => new Date(idTime(id)).toISOString();

/** The detail keys that may hold a session-scoped id. */
const SCOPED_KEYS = ["run_id", "inbox_id", "handoff_id"] as const;
const SHORT = /^(?:run|inb|hof)_[0-9a-z]{26}$/;

/** `id` without its session's suffix, when it has it. */
export function shortId<T extends string | null>(id: T, sessionId: string | null): T {
  if (id === null || sessionId === null) return id;
  const suffix = `_${sessionId}`;
  const short = id.endsWith(suffix) ? id.slice(0, -suffix.length) : id;
  return (SHORT.test(short) ? short : id) as T;
}

/** A stored id as readers know it: a short one gets its session's suffix back. */
export function fullId<T extends string | null>(id: T, sessionId: string | null): T {
  if (id === null || sessionId === null || !SHORT.test(id)) return id;
  return `${id}_${sessionId}` as T;
}

/** A handoff transition's details: they name the handoff's subject (see handoff-events.ts). */
const isHandoffSubject = (details: Record<string, unknown>) =>
  typeof details.source === "string" && typeof details.mode === "string" && typeof details.policy === "string";

/** The creation time a handoff id says (`hof_<ulid>_…`), as ISO 8601. */
const handoffIdTime = (handoffId: string) => idTimeIso(handoffId.slice("hof_".length));

/** The details as stored: JSON, session-scoped ids short, a creation time its handoff id says left out. */
export function storedDetails(
  details: Record<string, unknown>,
  sessionId: string | null,
  handoffId: string | null = null,
): string {
  const out = { ...details };
  if (sessionId !== null)
    for (const key of SCOPED_KEYS) {
      const value = out[key];
      if (typeof value === "string") out[key] = shortId(value, sessionId);
    }
  if (handoffId !== null && isHandoffSubject(out) && out.created_at === handoffIdTime(handoffId)) delete out.created_at;
  return JSON.stringify(out);
}

/** Stored details as readers know them (`handoffId` whole). */
export function readDetails(
  json: string,
  sessionId: string | null,
  handoffId: string | null = null,
): Record<string, unknown> {
  const details = JSON.parse(json) as Record<string, unknown>;
  if (sessionId !== null)
    for (const key of SCOPED_KEYS) {
      const value = details[key];
      if (typeof value === "string") details[key] = fullId(value, sessionId);
    }
  if (handoffId !== null && isHandoffSubject(details) && details.created_at === undefined)
    details.created_at = handoffIdTime(handoffId);
  return details;
}
