import type { AuditRecord } from "./record";

/**
 * The audit trail's retention policy (docs/scaling.md, What bounds a tenant and a
 * deployment): records older than AUDIT_RETENTION_DAYS leave D1 for the archive, one
 * NDJSON object per tenant per day. Pure: which days are old, where a day's object lives,
 * and how records become lines and lines records again.
 *
 * A record's day is the UTC day of its id, a ULID of the time it was made (`at`, save
 * for a writer whose clock stepped back within the millisecond it last used): D1 finds a
 * day's records by an id range on its indexes, and every record belongs to exactly one day.
 */

const DAY_MS = 86_400_000;
const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** The retention age in whole days, or null (keep everything in D1) when unset, empty, zero or not a number. */
export function retentionDays(raw: string | undefined): number | null {
  if (raw === undefined || raw.trim() === "") return null;
  const days = Number(raw);
  return Number.isInteger(days) && days > 0 ? days : null;
}

/** `YYYY-MM-DD` of a time (ms since epoch), UTC. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The first ms of a `YYYY-MM-DD` day, UTC. */
export function dayStart(day: string): number {
  return Date.parse(`${day}T00:00:00.000Z`);
}

export function nextDay(day: string): string {
  return dayOf(dayStart(day) + DAY_MS);
}

/**
 * The first day still kept in D1 at `now`: every day before it is older than `days` whole
 * days and goes to the archive. A day is archived only once all of it is past the age.
 */
export function firstKeptDay(now: number, days: number): string {
  return dayOf(now - days * DAY_MS);
}

/** The time (ms) a record's ULID id carries. */
export function idTime(id: string): number {
  let time = 0;
  for (const char of id.slice(0, 10)) time = time * 32 + CROCKFORD.indexOf(char.toUpperCase());
  return time;
}

/** The archive object of one tenant's day. Tenant names are `[a-z0-9_-]`, safe in a key. */
export function archiveKey(tenant: string, day: string): string {
  return `${archivePrefix(tenant)}${day}.ndjson`;
}

/** Where a tenant's archive objects are. */
export function archivePrefix(tenant: string): string {
  return `audit/${tenant}/`;
}

/** One record as one NDJSON line, newline included: the record as `GET /v1/audit` answers it. */
export function toLine(record: AuditRecord): string {
  return `${JSON.stringify({
    id: record.id,
    at: record.at,
    tenant: record.tenant,
    session_id: record.session_id,
    handoff_id: record.handoff_id,
    action: record.action,
    agent: record.agent,
    actor: record.actor,
    actor_type: record.actor_type,
    details: record.details,
  })}\n`;
}

/** The id of a line written by `toLine`. */
export function lineId(line: string): string {
  const id = (JSON.parse(line) as { id?: unknown }).id;
  if (typeof id !== "string") throw new Error(`an archive line without an id: ${line.slice(0, 80)}`);
  return id;
}

/**
 * Two id-ordered sequences of lines merged into one, each id once (an id in both is the
 * same record, archived before and still in D1: the archived line is kept).
 */
export async function* mergeById(
  archived: AsyncIterable<string>,
  kept: AsyncIterable<{ id: string; line: string }>,
): AsyncGenerator<string> {
  const a = archived[Symbol.asyncIterator]();
  const b = kept[Symbol.asyncIterator]();
  let left = await a.next();
  let right = await b.next();
  while (!left.done || !right.done) {
    const leftId = left.done ? null : lineId(left.value);
    if (right.done || (leftId !== null && leftId <= right.value.id)) {
      yield left.value as string;
      if (!right.done && leftId === right.value.id) right = await b.next();
      left = await a.next();
    } else {
      yield right.value.line;
      right = await b.next();
    }
  }
}
