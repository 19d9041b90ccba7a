import { FLUSH_BATCH_ROWS, MAX_BATCHES_PER_RUN } from "../../src/audit/outbox-policy";
import { ActorType, type AuditRecord } from "../../src/audit/record";
import type { LocalAuditRecord } from "../../src/rpc/session";
import { ifNotExists } from "./schema-text";
import type { Sql } from "./sql";

/**
 * The audit outbox in an object's SQLite. Records are appended in the same transaction
 * as the change they describe and kept after they reach D1, so the object can answer its
 * own audit trail with read-your-writes whatever D1's state.
 *
 * What reached D1 is a watermark, not a mark on each record: a flush sends the oldest
 * pending records in id order and sets `flushed = 1` on the newest of them only, so every
 * record up to the newest record so marked is in D1 and the rest are pending. A record
 * appended below the watermark (ids of one millisecond sort at random) takes the marks at
 * or above it off, and the records from there on are sent again: D1 ignores an id it
 * holds. One row written a record and two a flush, where marking each record was two a
 * record more (docs/benchmarks.md, The cost of a conversation).
 */

const ACTOR_TYPES = `(${ActorType.options.map((t) => `'${t}'`).join(", ")})`;

export const OUTBOX_DDL = [
  `CREATE TABLE audit (
     id          TEXT PRIMARY KEY,
     at          TEXT NOT NULL,
     tenant      TEXT NOT NULL,
     session_id  TEXT,
     handoff_id  TEXT,
     action      TEXT NOT NULL,
     agent       TEXT,
     actor       TEXT NOT NULL,
     actor_type  TEXT NOT NULL CHECK (actor_type IN ${ACTOR_TYPES}),
     details     TEXT NOT NULL,
     flushed     INTEGER NOT NULL DEFAULT 0 CHECK (flushed IN (0, 1))
   )`,
  "CREATE INDEX audit_pending ON audit (flushed, id)",
] as const;

/**
 * Session v13: the pending rows' index holds only pending rows. A flush's update then
 * takes a row out of it (one row written) where it used to move it within (two).
 */
export const OUTBOX_PENDING_ONLY_DDL = [
  "DROP INDEX audit_pending",
  "CREATE INDEX audit_pending ON audit (id) WHERE flushed = 0",
] as const;

/**
 * Session v19, collaboration v3: the index holds the watermark's marks (one a flush), not
 * the pending rows. As a new object's schema has it; an older object's step is
 * OUTBOX_WATERMARK_MIGRATION.
 */
export const OUTBOX_WATERMARK_DDL = [
  "DROP INDEX audit_pending",
  "CREATE INDEX audit_sent ON audit (id) WHERE flushed = 1",
] as const;

/**
 * OUTBOX_WATERMARK_DDL for an object that holds records: every record marked sent but the
 * watermark itself is unmarked, so a record pending below a sent one is sent again rather
 * than taken for sent. `IF EXISTS`/`IF NOT EXISTS`: an older object's rebuild to drop its
 * rowid (session v14, collaboration v2) already made the index as it is now.
 */
export const OUTBOX_WATERMARK_MIGRATION = [
  "DROP INDEX IF EXISTS audit_pending",
  `UPDATE audit SET flushed = 0 WHERE flushed = 1 AND id <> COALESCE(
     (SELECT MAX(id) FROM audit WHERE flushed = 1 AND id < COALESCE((SELECT MIN(id) FROM audit WHERE flushed = 0), '~')), '')`,
  ifNotExists(OUTBOX_WATERMARK_DDL[1]),
] as const;

/** Session v7: the outbox takes every actor type (`trigger` is new); SQLite cannot alter a CHECK, so it is rebuilt. */
export const OUTBOX_ACTOR_DDL = [
  "ALTER TABLE audit RENAME TO audit_v6",
  "DROP INDEX audit_pending",
  ...OUTBOX_DDL,
  "INSERT INTO audit SELECT * FROM audit_v6",
  "DROP TABLE audit_v6",
] as const;

/** Ten columns a row: ten rows fill a statement's 100 bound parameters. */
const APPEND_ROWS = 10;
const ROW = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

interface AuditRow extends Omit<AuditRecord, "details"> {
  details: string;
  flushed: number;
}

function toRecord(row: AuditRow): LocalAuditRecord {
  const { flushed, details, ...rest } = row;
  return { ...rest, details: JSON.parse(details) as Record<string, unknown>, flushed: flushed === 1 };
}

export interface FlushResult {
  flushed: number;
  /** Rows still pending after this run (more than one run's worth, or written meanwhile). */
  remaining: number;
}

export class Outbox {
  /** Counts appends, so a flush knows whether any landed while it waited on D1. */
  private appends = 0;
  /**
   * The smallest id of each append (by its count in `appends`) while a flush is waiting on
   * D1, so each flush, however many overlap, knows what landed below its batch meanwhile.
   */
  private lows: { at: number; lowest: string }[] = [];
  private flushing = 0;

  constructor(
    private readonly sql: Sql,
    /** Told of every record appended, inside the same transaction (the lifecycle notifications queue). */
    private readonly appended: (records: readonly AuditRecord[]) => void = () => undefined,
  ) {}

  /**
   * Appends records; synchronous so it joins the caller's `transactionSync`. One statement
   * per APPEND_ROWS records (a step's records together), within the 100 bound parameters.
   */
  append(records: readonly AuditRecord[]): void {
    if (records.length === 0) return;
    const lowest = records.map((r) => r.id).sort()[0]!;
    if (lowest <= this.watermark()) this.sql`UPDATE audit SET flushed = 0 WHERE flushed = 1 AND id >= ${lowest}`;
    for (let start = 0; start < records.length; start += APPEND_ROWS) {
      const chunk = records.slice(start, start + APPEND_ROWS);
      const binds = chunk.flatMap((r) => [
        r.id,
        r.at,
        r.tenant,
        r.session_id,
        r.handoff_id,
        r.action,
        r.agent,
        r.actor,
        r.actor_type,
        JSON.stringify(r.details),
      ]);
      this.sql.exec(
        `INSERT INTO audit (id, at, tenant, session_id, handoff_id, action, agent, actor, actor_type, details) VALUES ${chunk.map(() => ROW).join(", ")}`,
        ...binds,
      );
    }
    this.appends += 1;
    if (this.flushing > 0) this.lows.push({ at: this.appends, lowest });
    this.appended(records);
  }

  /** The newest record known to be in D1, with every record before it ("" when none is). */
  private watermark(): string {
    return this.sql<{ id: string | null }>`SELECT MAX(id) AS id FROM audit WHERE flushed = 1`[0]?.id ?? "";
  }

  pendingCount(): number {
    return this.sql<{ n: number }>`SELECT COUNT(*) AS n FROM audit WHERE id > ${this.watermark()}`[0]?.n ?? 0;
  }

  /** The object's records in time order, after `after` (exclusive), at most `limit`. */
  list({ after, limit }: { after?: string; limit: number }): LocalAuditRecord[] {
    const sent = this.watermark();
    return this.sql<AuditRow>`SELECT * FROM audit WHERE id > ${after ?? ""} ORDER BY id LIMIT ${limit}`.map((row) =>
      toRecord({ ...row, flushed: row.id <= sent ? 1 : 0 }),
    );
  }

  /**
   * Sends pending records to `write` in batches of FLUSH_BATCH_ROWS, oldest first, marking
   * each batch flushed only after `write` resolved. A failing `write` rejects with the
   * rows still pending; rows are never deleted here.
   */
  async flush(
    write: (records: AuditRecord[]) => Promise<void>,
    maxBatches = MAX_BATCHES_PER_RUN,
  ): Promise<FlushResult> {
    let flushed = 0;
    for (let batch = 0; batch < maxBatches; batch++) {
      const seen = this.appends;
      const rows = this
        .sql<AuditRow>`SELECT * FROM audit WHERE id > ${this.watermark()} ORDER BY id LIMIT ${FLUSH_BATCH_ROWS}`;
      if (rows.length === 0) return { flushed, remaining: 0 };
      const records = rows.map((row) => {
        const { flushed: _flushed, ...record } = toRecord(row);
        return record;
      });
      this.flushing += 1;
      try {
        await write(records);
      } finally {
        this.flushing -= 1;
      }
      // A record appended while D1 was written, below this batch's newest, is not in it:
      // the watermark stops short of it (and of the batch, when it sorts first).
      const below = this.lows
        .filter((l) => l.at > seen)
        .reduce<string | undefined>((min, l) => (min === undefined || l.lowest < min ? l.lowest : min), undefined);
      if (this.flushing === 0) this.lows = [];
      const newest = records.findLast((r) => below === undefined || r.id < below);
      if (newest) this.sql`UPDATE audit SET flushed = 1 WHERE id = ${newest.id}`;
      flushed += records.length;
      // A short batch was all there was, unless records were appended while D1 was written.
      if (rows.length < FLUSH_BATCH_ROWS && this.appends === seen) return { flushed, remaining: 0 };
    }
    return { flushed, remaining: this.pendingCount() };
  }
}
