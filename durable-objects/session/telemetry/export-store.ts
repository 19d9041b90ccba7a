import { MAX_QUEUED_EXPORTS } from "../../../src/telemetry/export-policy";
import { ALL_TABLES, type Sql, type TablesHeld } from "../../shared/sql";

/**
 * Trace exports waiting to be sent (session v25, docs/observability.md, Export): one row per
 * run and destination, queued in the transaction that ends or pauses the run. A row of a run
 * that paused stays after its spans are sent (`pending = 0`), holding the ids of the spans
 * sent, so that the run's end sends only the rest. A destination holds at most
 * MAX_QUEUED_EXPORTS rows: one more marks the oldest pending one `evicted`, and the next
 * export run counts its spans as dropped and removes it.
 */

export const TELEMETRY_EXPORTS_DDL = [
  `CREATE TABLE telemetry_exports (
     run_id         TEXT NOT NULL,
     target         TEXT NOT NULL CHECK (target IN ('tenant', 'operator')),
     pending        INTEGER NOT NULL CHECK (pending IN (0, 1)),
     evicted        INTEGER NOT NULL DEFAULT 0 CHECK (evicted IN (0, 1)),
     queued_at      INTEGER NOT NULL,
     next_at        INTEGER NOT NULL,
     attempts       INTEGER NOT NULL DEFAULT 0,
     failing_since  INTEGER,
     last_error     TEXT,
     sent           TEXT NOT NULL DEFAULT '[]',
     PRIMARY KEY (run_id, target)
   ) WITHOUT ROWID`,
] as const;

export type ExportTarget = "tenant" | "operator";

export interface QueuedExport {
  run_id: string;
  target: ExportTarget;
  evicted: boolean;
  attempts: number;
  failing_since: number | null;
  /** Span ids of this run already sent to this destination. */
  sent: string[];
}

interface Row {
  run_id: string;
  target: ExportTarget;
  evicted: number;
  attempts: number;
  failing_since: number | null;
  sent: string;
}

export class ExportQueue {
  constructor(
    private readonly sql: Sql,
    private readonly tables: TablesHeld = ALL_TABLES,
  ) {}

  /**
   * Queues (or re-queues) the run's export to `target`, due at `now`; inside the caller's
   * transaction. Past the bound, the oldest other pending export of the target is evicted.
   */
  add(runId: string, target: ExportTarget, now: number): void {
    this.sql`INSERT INTO telemetry_exports (run_id, target, pending, queued_at, next_at)
      VALUES (${runId}, ${target}, 1, ${now}, ${now})
      ON CONFLICT (run_id, target) DO UPDATE SET
        pending = 1, queued_at = excluded.queued_at,
        next_at = CASE WHEN pending = 1 THEN next_at ELSE excluded.next_at END`;
    const held = this.sql<{ n: number }>`SELECT COUNT(*) AS n FROM telemetry_exports
      WHERE target = ${target} AND evicted = 0`[0]!.n;
    if (held <= MAX_QUEUED_EXPORTS) return;
    this.sql`UPDATE telemetry_exports SET evicted = 1, pending = 1, next_at = ${now}
      WHERE (run_id, target) = (SELECT run_id, target FROM telemetry_exports
        WHERE target = ${target} AND evicted = 0 AND pending = 1 AND run_id <> ${runId} ORDER BY queued_at LIMIT 1)`;
  }

  /** Pending exports due by `now`, evicted ones first, then oldest first. */
  due(now: number, limit: number): QueuedExport[] {
    if (!this.tables.has("telemetry_exports")) return [];
    return this.sql<Row>`SELECT run_id, target, evicted, attempts, failing_since, sent FROM telemetry_exports
      WHERE pending = 1 AND next_at <= ${now} ORDER BY evicted DESC, queued_at LIMIT ${limit}`.map((row) => ({
      run_id: row.run_id,
      target: row.target,
      evicted: row.evicted === 1,
      attempts: row.attempts,
      failing_since: row.failing_since,
      sent: JSON.parse(row.sent) as string[],
    }));
  }

  /** Sent: removed when the run has ended, else kept with the ids sent, waiting for its next export. */
  sent(e: QueuedExport, spanIds: readonly string[], runEnded: boolean): void {
    if (runEnded) {
      this.remove(e);
      return;
    }
    this.sql`UPDATE telemetry_exports SET pending = 0, attempts = 0, failing_since = NULL, last_error = NULL,
      sent = ${JSON.stringify([...e.sent, ...spanIds])} WHERE run_id = ${e.run_id} AND target = ${e.target}`;
  }

  retryAt(e: QueuedExport, attempts: number, at: number, failingSince: number, error: string): void {
    this.sql`UPDATE telemetry_exports SET attempts = ${attempts}, next_at = ${at}, failing_since = ${failingSince},
      last_error = ${error} WHERE run_id = ${e.run_id} AND target = ${e.target}`;
  }

  remove(e: Pick<QueuedExport, "run_id" | "target">): void {
    this.sql`DELETE FROM telemetry_exports WHERE run_id = ${e.run_id} AND target = ${e.target}`;
  }

  /** When the next pending export is due (null: none waits). */
  nextAt(): number | null {
    if (!this.tables.has("telemetry_exports")) return null;
    return (
      this.sql<{ at: number | null }>`SELECT MIN(next_at) AS at FROM telemetry_exports WHERE pending = 1`[0]?.at ?? null
    );
  }
}
