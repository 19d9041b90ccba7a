import { liveFromTrace } from "../../../src/runtime/live-events";
import { type LiveEvent, StoredLiveEvent } from "../../../src/schemas/live";
import { TraceEvent } from "../../../src/schemas/run";
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
  // Only the envelope is checked: a row keeps the data of its day (StoredLiveEvent), written from a typed LiveEvent.
  return StoredLiveEvent.parse(JSON.parse(row.event)) as LiveEvent;
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

  /**
   * Events after `after` in order, at most `limit`; only `runId`'s when given. A run's trace
   * events are kept once, in `run_events`, and read from there as the live events they are
   * (session v21): a session's live events are its own rows and its trace, merged by id.
   * An object from before v21 holds a trace event in both: it is answered once.
   */
  after(after: string, limit: number, runId?: string): LiveEvent[] {
    const own = this.tables.has("live_events")
      ? runId === undefined
        ? this.sql<StoredLive>`SELECT id, event, format FROM live_events WHERE id > ${after} ORDER BY id LIMIT ${limit}`
        : this
            .sql<StoredLive>`SELECT id, event, format FROM live_events WHERE run_id = ${runId} AND id > ${after} ORDER BY id LIMIT ${limit}`
      : [];
    const trace = this.tables.has("run_events")
      ? runId === undefined
        ? this.sql<StoredTrace>`SELECT id, event FROM run_events WHERE id > ${after} ORDER BY id LIMIT ${limit}`
        : this
            .sql<StoredTrace>`SELECT id, event FROM run_events WHERE run_id = ${runId} AND id > ${after} ORDER BY id LIMIT ${limit}`
      : [];
    const merged: LiveEvent[] = [];
    let [i, j] = [0, 0];
    while (merged.length < limit && (i < own.length || j < trace.length)) {
      const a = own[i];
      const b = trace[j];
      if (b === undefined || (a !== undefined && a.id <= b.id)) {
        if (b?.id === a!.id) j++;
        merged.push(parse(a!));
        i++;
      } else {
        merged.push(liveFromTrace(TraceEvent.parse(JSON.parse(b.event))));
        j++;
      }
    }
    return merged;
  }

  /** The newest event's id ("" when there is none). */
  latest(): string {
    const own = this.tables.has("live_events")
      ? (this.sql<{ id: string | null }>`SELECT MAX(id) AS id FROM live_events`[0]?.id ?? "")
      : "";
    const trace = this.tables.has("run_events")
      ? (this.sql<{ id: string | null }>`SELECT MAX(id) AS id FROM run_events`[0]?.id ?? "")
      : "";
    return [own, trace].sort().at(-1)!;
  }
}

interface StoredLive {
  id: string;
  event: string;
  format: number;
}

interface StoredTrace {
  id: string;
  event: string;
}
