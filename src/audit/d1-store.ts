import { handoffIndexStatements } from "./handoff-index";
import { inboxIndexStatements } from "./inbox-index";
import { chunk, FLUSH_BATCH_ROWS, ROWS_PER_STATEMENT } from "./outbox-policy";
import type { AuditRecord } from "./record";
import { sessionIndexStatements } from "./session-index";
import { readRow, STORED_COLUMNS, type StoredRow, storedRow, storedValues } from "./stored-record";

/**
 * The audit log in D1. Writes ignore a row whose id is already there, so a batch retried
 * after a timeout, or flushed twice, never makes a duplicate. `ON CONFLICT (tenant, id) DO NOTHING`
 * rather than `INSERT OR IGNORE`: OR IGNORE would also silently skip a row that breaks a
 * CHECK constraint, and the outbox would then count a lost record as delivered.
 */

const COLUMNS = STORED_COLUMNS.join(", ");
const WIDTH = STORED_COLUMNS.length;

function insertStatement(db: D1Database, rows: readonly AuditRecord[]): D1PreparedStatement {
  const placeholders = rows.map(
    (_, r) => `(${Array.from({ length: WIDTH }, (_, c) => `?${r * WIDTH + c + 1}`).join(", ")})`,
  );
  const binds = rows.flatMap((record) => storedValues(storedRow(record)));
  return db
    .prepare(`INSERT INTO audit_log (${COLUMNS}) VALUES ${placeholders.join(", ")} ON CONFLICT (tenant, id) DO NOTHING`)
    .bind(...binds);
}

/**
 * Writes up to FLUSH_BATCH_ROWS records in one D1 batch (one transaction), with the
 * sessions-index, handoffs-index and inbox-index rows they imply. The sessions index goes first: its
 * counts add only records audit_log does not hold yet, so it must look before the
 * inserts. Throws what D1 throws; the caller keeps the rows and retries.
 */
export async function writeAuditBatch(
  db: D1Database,
  records: readonly AuditRecord[],
  historyLengths?: ReadonlyMap<string, number>,
): Promise<void> {
  if (records.length === 0) return;
  if (records.length > FLUSH_BATCH_ROWS) throw new RangeError(`at most ${FLUSH_BATCH_ROWS} audit rows per batch`);
  await db.batch([
    ...sessionIndexStatements(db, records, historyLengths),
    ...chunk(records, ROWS_PER_STATEMENT).map((rows) => insertStatement(db, rows)),
    ...handoffIndexStatements(db, records),
    ...inboxIndexStatements(db, records),
  ]);
}

export interface AuditQuery {
  session_id?: string;
  /** Records about this agent or made by it. */
  agent?: string;
  action?: string;
  /** Only records at or after this time (ms since epoch). */
  since?: number;
  limit: number;
  /** The id of the last record of the previous page (exclusive). */
  before?: string;
}

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** The smallest ULID of a millisecond: `id >= floor` selects records made at or after it. */
export function ulidFloor(ms: number): string {
  let time = Math.max(0, Math.floor(ms));
  let prefix = "";
  for (let i = 0; i < 10; i++) {
    prefix = CROCKFORD[time % 32] + prefix;
    time = Math.floor(time / 32);
  }
  return prefix + "0".repeat(16);
}

/**
 * The statement of one page of a tenant's audit log: every filter of `GET /v1/audit`
 * (docs/api.md) reads through the table's (tenant, id) key or an index of migration 0016
 * (test/audit/d1-store.test.ts reads the plans).
 */
export function auditPageQuery(tenant: string, query: AuditQuery): { sql: string; binds: (string | number)[] } {
  const where = ["tenant = ?1"];
  const binds: (string | number)[] = [tenant];
  const bind = (clause: (n: string) => string, value: string | number) => {
    binds.push(value);
    where.push(clause(`?${binds.length}`));
  };
  // `IS NOT NULL` is implied by the equality, but SQLite picks a partial index only when it sees its condition.
  if (query.session_id) bind((n) => `session_id = ${n} AND session_id IS NOT NULL`, query.session_id);
  if (query.action) bind((n) => `action = ${n}`, query.action);
  if (query.since !== undefined) {
    // An id never sorts before its record's time, so the id bound keeps every match; a stored
    // `at` (one that is not the id's time) is the truth for its record.
    bind((n) => `id >= ${n}`, ulidFloor(query.since));
    bind((n) => `(at IS NULL OR at >= ${n})`, new Date(query.since).toISOString());
  }
  if (query.before) bind((n) => `id < ${n}`, query.before);
  // Named, not left to the planner: without statistics it prefers the key's (tenant, id) order,
  // which reads the whole tenant to find one session's records.
  const select = (terms: string[], index: string | null) =>
    `SELECT ${COLUMNS} FROM audit_log${index ? ` INDEXED BY ${index}` : ""} WHERE ${terms.join(" AND ")}`;
  let from = select(where, query.session_id ? "audit_log_session" : query.action ? "audit_log_action" : null);
  if (query.agent) {
    binds.push(query.agent);
    const n = `?${binds.length}`;
    // About the agent, or made by it about another: two disjoint halves, each read through
    // its own index in id order and merged (an OR in one WHERE is read through the tenant's).
    // The actor index holds only records an agent made about another agent; these terms select it.
    from = `${select([...where, `agent = ${n}`, "agent IS NOT NULL"], "audit_log_agent")} UNION ALL ${select([...where, `actor = ${n}`, "actor_type = 'agent'", "actor IS NOT agent"], "audit_log_actor")}`;
  }
  binds.push(query.limit + 1);
  return { sql: `${from} ORDER BY id DESC LIMIT ?${binds.length}`, binds };
}

/** One page of a tenant's audit log, newest first; `next` is the cursor position or null. */
export async function queryAudit(
  db: D1Database,
  tenant: string,
  query: AuditQuery,
): Promise<{ records: AuditRecord[]; next: string | null }> {
  const { sql, binds } = auditPageQuery(tenant, query);
  const { results } = await db
    .prepare(sql)
    .bind(...binds)
    .all<StoredRow>();
  const page = results.slice(0, query.limit);
  const next = results.length > query.limit ? (page.at(-1)?.id ?? null) : null;
  return { records: page.map(readRow), next };
}
