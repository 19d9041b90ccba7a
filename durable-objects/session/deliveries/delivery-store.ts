import { AuditRecord } from "../../../src/audit/record";
import { ALL_TABLES, type Sql, type TablesHeld } from "../../shared/sql";

/**
 * Lifecycle notifications waiting to go to the tenant's events_url (schema v8): each a
 * handoff or run audit record, queued in the transaction that wrote the record, with its
 * attempts and when the next is due.
 */

export const DELIVERY_FORMAT = 1;

export const DELIVERIES_DDL = [
  `CREATE TABLE deliveries (
     id          TEXT PRIMARY KEY,
     record      TEXT NOT NULL,
     attempts    INTEGER NOT NULL DEFAULT 0,
     next_at     INTEGER NOT NULL,
     last_error  TEXT,
     format      INTEGER NOT NULL DEFAULT ${DELIVERY_FORMAT}
   )`,
  `CREATE INDEX deliveries_due ON deliveries (next_at)`,
] as const;

export interface Delivery {
  record: AuditRecord;
  attempts: number;
  last_error: string | null;
}

export class DeliveryQueue {
  constructor(
    private readonly sql: Sql,
    /** A session with nothing to notify holds no deliveries table: reads answer "none". */
    private readonly tables: TablesHeld = ALL_TABLES,
  ) {}

  add(records: readonly AuditRecord[], now: number): void {
    for (const r of records)
      this.sql`INSERT OR IGNORE INTO deliveries (id, record, next_at) VALUES (${r.id}, ${JSON.stringify(r)}, ${now})`;
  }

  due(now: number, limit: number): Delivery[] {
    if (!this.tables.has("deliveries")) return [];
    return this.sql<{
      record: string;
      attempts: number;
      last_error: string | null;
      format: number;
    }>`SELECT record, attempts, last_error, format FROM deliveries WHERE next_at <= ${now} ORDER BY id LIMIT ${limit}`.map(
      (row) => {
        if (row.format !== DELIVERY_FORMAT) throw new Error(`delivery format ${row.format} is not ${DELIVERY_FORMAT}`);
        return {
          record: AuditRecord.parse(JSON.parse(row.record)),
          attempts: row.attempts,
          last_error: row.last_error,
        };
      },
    );
  }

  retryAt(id: string, attempts: number, at: number, error: string): void {
    this.sql`UPDATE deliveries SET attempts = ${attempts}, next_at = ${at}, last_error = ${error} WHERE id = ${id}`;
  }

  remove(id: string): void {
    this.sql`DELETE FROM deliveries WHERE id = ${id}`;
  }

  clear(): void {
    this.sql`DELETE FROM deliveries`;
  }

  /**
   * The run whose handoff tool call started handoff `handoffId` (null: none did): its
   * `handoff.initiated` record names the run, and the session's audit table (the outbox,
   * which keeps every record it wrote) holds that record.
   */
  handoffRun(handoffId: string): string | null {
    const row = this.sql<{ run_id: unknown }>`SELECT json_extract(details, '$.run_id') AS run_id FROM audit
      WHERE handoff_id = ${handoffId} AND action = 'handoff.initiated' LIMIT 1`[0];
    return typeof row?.run_id === "string" ? row.run_id : null;
  }

  /** When the next delivery is due (null: none waits). */
  nextAt(): number | null {
    if (!this.tables.has("deliveries")) return null;
    return this.sql<{ at: number | null }>`SELECT MIN(next_at) AS at FROM deliveries`[0]?.at ?? null;
  }
}
