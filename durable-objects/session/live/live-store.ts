import { LiveEvent } from "../../../src/schemas/live";
import { ALL_TABLES, type Sql, type TablesHeld } from "../../shared/sql";

/**
 * The session's live events (schema v6): every event SSE callers and WebSocket subscribers
 * are sent, kept so a subscriber that reconnects with `after` is replayed what it missed.
 * Synchronous SQL, so events join the transaction of the change they describe.
 */

export const LIVE_FORMAT = 1;

export const LIVE_DDL = [
  `CREATE TABLE live_events (
     id      TEXT PRIMARY KEY,
     run_id  TEXT,
     event   TEXT NOT NULL,
     format  INTEGER NOT NULL DEFAULT ${LIVE_FORMAT}
   )`,
  `CREATE INDEX live_events_run ON live_events (run_id, id)`,
] as const;

function parse(row: { event: string; format: number }): LiveEvent {
  if (row.format !== LIVE_FORMAT) throw new Error(`live event format ${row.format} is not ${LIVE_FORMAT}`);
  return LiveEvent.parse(JSON.parse(row.event));
}

/**
 * Session v20: no index by run. It was a row written with every event for one kind of read,
 * a run's replay, which reads on in id order from where its subscriber left off: what it
 * reads past is the few events of other runs published since, and rows read cost a
 * thousandth of rows written (docs/benchmarks.md, The cost of a conversation).
 */
export const LIVE_NO_RUN_INDEX_DDL = "DROP INDEX IF EXISTS live_events_run";

/** Three columns a row: 33 rows stay within a statement's 100 bound parameters. */
const APPEND_ROWS = 33;

export class LiveStore {
  constructor(
    private readonly sql: Sql,
    /** A session with nothing published yet holds no live events table: reads answer "none". */
    private readonly tables: TablesHeld = ALL_TABLES,
  ) {}

  append(events: readonly LiveEvent[]): void {
    // One statement per APPEND_ROWS events (a step's events together), within the 100 bound parameters.
    for (let start = 0; start < events.length; start += APPEND_ROWS) {
      const chunk = events.slice(start, start + APPEND_ROWS);
      this.sql.exec(
        `INSERT OR IGNORE INTO live_events (id, run_id, event) VALUES ${chunk.map(() => "(?, ?, ?)").join(", ")}`,
        ...chunk.flatMap((e) => [e.id, e.run_id, JSON.stringify(e)]),
      );
    }
  }

  /** Events after `after` in order, at most `limit`; only `runId`'s when given. */
  after(after: string, limit: number, runId?: string): LiveEvent[] {
    if (!this.tables.has("live_events")) return [];
    const rows =
      runId === undefined
        ? this.sql<{
            event: string;
            format: number;
          }>`SELECT event, format FROM live_events WHERE id > ${after} ORDER BY id LIMIT ${limit}`
        : this.sql<{
            event: string;
            format: number;
          }>`SELECT event, format FROM live_events WHERE run_id = ${runId} AND id > ${after} ORDER BY id LIMIT ${limit}`;
    return rows.map(parse);
  }

  /** The newest event's id ("" when there is none). */
  latest(): string {
    if (!this.tables.has("live_events")) return "";
    return this.sql<{ id: string | null }>`SELECT MAX(id) AS id FROM live_events`[0]?.id ?? "";
  }
}
