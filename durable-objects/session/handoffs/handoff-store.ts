import { HandoffRow, type HandoffStep } from "../../../src/handoff/record";
import { HANDOFF_STATUSES, OPEN_STATUSES, sqlList } from "../../../src/handoff/statuses";
import { ALL_TABLES, type Sql, type TablesHeld } from "../../shared/sql";

/**
 * The SessionDO's handoff tables: every handoff with the step it is about to take, the
 * idempotency keys, the lease the current agent holds, and the leases still to release
 * (the inbox, once here, has its own store). Every method is synchronous SQL, so it joins the caller's
 * `transactionSync`. Rows are parsed on read (HandoffRow) and carry their format.
 */

/** The format of stored handoff rows; a later format comes with an upgrade of older rows. */
export const HANDOFF_FORMAT = 1;

const OPEN = sqlList(OPEN_STATUSES);

export const HANDOFF_DDL = [
  `CREATE TABLE handoffs (
     id             TEXT PRIMARY KEY,
     status         TEXT NOT NULL CHECK (status IN ${sqlList(HANDOFF_STATUSES)}),
     step           TEXT CHECK (step IS NULL OR step IN ('load_target', 'take_lease', 'activate')),
     record         TEXT NOT NULL,
     plan           TEXT,
     capacity       INTEGER,
     lease_id       TEXT,
     fencing_token  INTEGER,
     interrupted    INTEGER NOT NULL DEFAULT 0 CHECK (interrupted IN (0, 1)),
     created_at     INTEGER NOT NULL,
     updated_at     INTEGER NOT NULL
   )`,
  `CREATE INDEX handoffs_open ON handoffs (status) WHERE status IN ${OPEN}`,
  `CREATE TABLE handoff_requests (
     idempotency_key  TEXT PRIMARY KEY,
     fingerprint      TEXT NOT NULL,
     handoff_id       TEXT NOT NULL,
     outcome          TEXT,
     created_at       INTEGER NOT NULL
   )`,
  `CREATE TABLE session_lease (
     id             INTEGER PRIMARY KEY CHECK (id = 1),
     agent          TEXT NOT NULL,
     lease_id       TEXT NOT NULL,
     fencing_token  INTEGER NOT NULL,
     state          TEXT NOT NULL CHECK (state IN ('tentative', 'held')),
     capacity       INTEGER NOT NULL CHECK (capacity > 0)
   )`,
  `CREATE TABLE lease_releases (
     id             INTEGER PRIMARY KEY AUTOINCREMENT,
     agent          TEXT NOT NULL,
     lease_id       TEXT,
     fencing_token  INTEGER,
     reason         TEXT NOT NULL
   )`,
] as const;

/** The tables HANDOFF_DDL makes: made together, as the code here expects them (see `present`). */
export const HANDOFF_TABLES = ["handoffs", "handoff_requests", "session_lease", "lease_releases"] as const;

/** v2's inbox of escalations (v4 moved it into inbox_items and dropped it). */
export const HANDOFF_INBOX_V2_DDL = [
  `CREATE TABLE inbox (
     id            TEXT PRIMARY KEY,
     kind          TEXT NOT NULL CHECK (kind IN ('handoff_escalation')),
     handoff_id    TEXT,
     source_agent  TEXT,
     target_agent  TEXT,
     reason        TEXT NOT NULL,
     details       TEXT NOT NULL,
     created_at    INTEGER NOT NULL
   )`,
] as const;

/** v4: the tool calls a handoff keeps out of its target's history. */
export const HANDOFF_HIDDEN_CALLS_DDL = [
  `ALTER TABLE handoffs ADD COLUMN hidden_calls TEXT NOT NULL DEFAULT '[]'`,
] as const;

/** Adds the format column to the handoffs table made by HANDOFF_DDL. */
export const HANDOFF_FORMAT_DDL = [
  `ALTER TABLE handoffs ADD COLUMN format INTEGER NOT NULL DEFAULT ${HANDOFF_FORMAT}`,
] as const;

/** The lease the session's current agent holds in its AgentDO. */
export interface SessionLease {
  agent: string;
  lease_id: string;
  fencing_token: number;
  /** Tentative until the AgentDO confirmed it. */
  state: "tentative" | "held";
  capacity: number;
}

/** A lease to free; without a lease id, whatever the session holds at that agent. */
export interface LeaseRelease {
  id: number;
  agent: string;
  lease_id: string | null;
  fencing_token: number | null;
  reason: string;
}

/** What the first request with an idempotency key was answered. */
export interface StoredOutcome {
  fingerprint: string;
  handoff_id: string;
  outcome: unknown;
}

interface StoredRow {
  record: string;
  step: HandoffStep | null;
  plan: string | null;
  capacity: number | null;
  lease_id: string | null;
  fencing_token: number | null;
  interrupted: number;
  hidden_calls: string;
  format: number;
}

const COLUMNS = "record, step, plan, capacity, lease_id, fencing_token, interrupted, hidden_calls, format";

function toRow(row: StoredRow): HandoffRow {
  if (row.format !== HANDOFF_FORMAT) throw new Error(`handoff row format ${row.format} is not ${HANDOFF_FORMAT}`);
  return HandoffRow.parse({
    record: JSON.parse(row.record),
    step: row.step,
    plan: row.plan === null ? null : JSON.parse(row.plan),
    capacity: row.capacity,
    lease:
      row.lease_id === null || row.fencing_token === null
        ? null
        : { lease_id: row.lease_id, fencing_token: row.fencing_token },
    interrupted: row.interrupted === 1,
    hidden_calls: JSON.parse(row.hidden_calls),
  });
}

export class HandoffStore {
  /**
   * The session lease as this instance last read or wrote it (undefined: unknown). Only
   * this store writes the row; a transaction that rolls back must call `forget`.
   */
  private lease: SessionLease | null | undefined = undefined;
  /** The queued releases, kept the same way (undefined: unknown). */
  private queued: LeaseRelease[] | undefined = undefined;

  constructor(
    private readonly sql: Sql,
    private readonly tables: TablesHeld = ALL_TABLES,
  ) {}

  /**
   * False while the object holds no handoffs table: a session before its first handoff, or
   * an object migrated before handoffs existed and not touched since (or one with no schema).
   */
  present(): boolean {
    return this.tables.has("handoffs");
  }

  /** After the object's storage was wiped, or a transaction that wrote here rolled back. */
  forget(): void {
    this.lease = undefined;
    this.queued = undefined;
  }

  get(id: string): HandoffRow | null {
    if (!this.present()) return null;
    const row = this.sql.exec<StoredRow>(`SELECT ${COLUMNS} FROM handoffs WHERE id = ?`, id)[0];
    return row ? toRow(row) : null;
  }

  /** Handoffs still holding the lock, oldest first (at most one unless something is wrong). */
  open(): HandoffRow[] {
    if (!this.present()) return [];
    return this.sql.exec<StoredRow>(`SELECT ${COLUMNS} FROM handoffs WHERE status IN ${OPEN} ORDER BY id`).map(toRow);
  }

  /** Inserts or replaces a handoff with everything the flow knows about it. */
  save(row: HandoffRow, now: number): void {
    const r = row.record;
    this
      .sql`INSERT INTO handoffs (id, status, step, record, plan, capacity, lease_id, fencing_token, interrupted, hidden_calls, created_at, updated_at)
      VALUES (${r.id}, ${r.status}, ${row.step}, ${JSON.stringify(r)}, ${row.plan === null ? null : JSON.stringify(row.plan)},
              ${row.capacity}, ${row.lease?.lease_id ?? null}, ${row.lease?.fencing_token ?? null}, ${row.interrupted ? 1 : 0}, ${JSON.stringify(row.hidden_calls)},
              ${Date.parse(r.created_at)}, ${now})
      ON CONFLICT (id) DO UPDATE SET status = excluded.status, step = excluded.step, record = excluded.record,
        plan = excluded.plan, capacity = excluded.capacity, lease_id = excluded.lease_id,
        fencing_token = excluded.fencing_token, interrupted = excluded.interrupted, hidden_calls = excluded.hidden_calls,
        updated_at = excluded.updated_at`;
  }

  // ── Idempotency ───────────────────────────────────────────────────────────

  request(key: string): StoredOutcome | null {
    if (!this.present()) return null;
    const row = this.sql<{ fingerprint: string; handoff_id: string; outcome: string | null }>`
      SELECT fingerprint, handoff_id, outcome FROM handoff_requests WHERE idempotency_key = ${key}`[0];
    return row
      ? {
          fingerprint: row.fingerprint,
          handoff_id: row.handoff_id,
          outcome: row.outcome === null ? null : JSON.parse(row.outcome),
        }
      : null;
  }

  addRequest(key: string, fingerprint: string, handoffId: string, now: number): void {
    this.sql`INSERT INTO handoff_requests (idempotency_key, fingerprint, handoff_id, created_at)
             VALUES (${key}, ${fingerprint}, ${handoffId}, ${now})`;
  }

  /** Records the answer the request got; only the first answer counts. */
  answer(handoffId: string, outcome: unknown): void {
    this
      .sql`UPDATE handoff_requests SET outcome = ${JSON.stringify(outcome)} WHERE handoff_id = ${handoffId} AND outcome IS NULL`;
  }

  /** Forgets a request not answered for good (see keepsOutcome): a retry with its key runs afresh. */
  forgetRequest(handoffId: string): void {
    this.sql`DELETE FROM handoff_requests WHERE handoff_id = ${handoffId} AND outcome IS NULL`;
  }

  // ── Leases ────────────────────────────────────────────────────────────────

  sessionLease(): SessionLease | null {
    if (this.lease === undefined) {
      this.lease = !this.tables.has("session_lease")
        ? null
        : (this
            .sql<SessionLease>`SELECT agent, lease_id, fencing_token, state, capacity FROM session_lease WHERE id = 1`[0] ??
          null);
    }
    return this.lease === null ? null : { ...this.lease };
  }

  setSessionLease(lease: SessionLease | null): void {
    this.lease = undefined;
    if (lease === null) {
      this.sql`DELETE FROM session_lease WHERE id = 1`;
    } else {
      this.sql`INSERT OR REPLACE INTO session_lease (id, agent, lease_id, fencing_token, state, capacity)
               VALUES (1, ${lease.agent}, ${lease.lease_id}, ${lease.fencing_token}, ${lease.state}, ${lease.capacity})`;
    }
    this.lease = lease === null ? null : { ...lease };
  }

  /** Marks the session lease held, unless it was replaced meanwhile. */
  markHeld(leaseId: string, fencingToken: number): void {
    const held = this
      .sql<SessionLease>`UPDATE session_lease SET state = 'held' WHERE id = 1 AND lease_id = ${leaseId} AND fencing_token = ${fencingToken}
      RETURNING agent, lease_id, fencing_token, state, capacity`[0];
    if (held) this.lease = held;
  }

  queueRelease(release: Omit<LeaseRelease, "id">): void {
    const known = this.queued;
    this.queued = undefined;
    const row = this.sql<{ id: number }>`INSERT INTO lease_releases (agent, lease_id, fencing_token, reason)
             VALUES (${release.agent}, ${release.lease_id}, ${release.fencing_token}, ${release.reason}) RETURNING id`[0];
    if (known && row) this.queued = [...known, { id: row.id, ...release }];
  }

  releases(): LeaseRelease[] {
    this.queued ??= this.tables.has("lease_releases")
      ? this.sql<LeaseRelease>`SELECT id, agent, lease_id, fencing_token, reason FROM lease_releases ORDER BY id`
      : [];
    return [...this.queued];
  }

  releaseDone(id: number): void {
    const known = this.queued;
    this.queued = undefined;
    this.sql`DELETE FROM lease_releases WHERE id = ${id}`;
    if (known) this.queued = known.filter((r) => r.id !== id);
  }
}
