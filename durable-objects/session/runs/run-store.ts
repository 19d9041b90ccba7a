import type { RunList, RunListQuery } from "../../../src/rpc/session";
import { liveRunChange } from "../../../src/runtime/live-events";
import { ACTIVE_RUN_STATUSES, RUN_STEPS, type RunStep } from "../../../src/runtime/run-record";
import { RUN_STATUSES, Run, RunOrigin, type RunStatus, RunTrace, TraceEvent, TurnWork } from "../../../src/schemas/run";
import { derivedRunTrace } from "../../../src/telemetry/propagation";
import { ALL_TABLES, type Sql, type TablesHeld } from "../../shared/sql";
import type { LiveStore } from "../live/live-store";

/**
 * The session's runs (schema v4, v5): each run's record with the step it is taking and the
 * work left of its last model response, and its trace events. Synchronous SQL, so it joins the
 * caller's transaction; rows are parsed on
 * read and carry their format.
 *
 * Formats of a run's record: 1, the run as the API shows it (without `trace_id`); 2 adds
 * `trace_id` and `trace_parent`, the caller's context (docs/observability.md, Propagation),
 * and may hold `origin`, the A2A request that started it (absent: null).
 * A format-1 run is read as a run of its own derived trace; it is written back as format 2.
 */

export const RUN_FORMAT = 2;
/**
 * The format of records written before runs kept their trace, and the columns' default as
 * the tables were made (a save names its format; trace events are still format 1).
 */
const RUN_FORMAT_UNTRACED = 1;

const list = (values: readonly string[]) => `(${values.map((v) => `'${v}'`).join(", ")})`;

/** The run events table and its index, as v4 made them (unchanged since). */
export const RUN_EVENTS_DDL = [
  `CREATE TABLE run_events (
     id      TEXT PRIMARY KEY,
     run_id  TEXT NOT NULL,
     event   TEXT NOT NULL,
     format  INTEGER NOT NULL DEFAULT ${RUN_FORMAT_UNTRACED}
   )`,
  `CREATE INDEX run_events_run ON run_events (run_id, id)`,
] as const;

/**
 * Session v21: no index by run. A run's events are read with the run, a scan of the
 * session's few (rows read cost a thousandth of rows written), and the live events read
 * the session's trace from here in id order (see LiveStore.after).
 */
export const RUN_EVENTS_NO_RUN_INDEX_DDL = "DROP INDEX IF EXISTS run_events_run";

export const RUN_DDL = [
  `CREATE TABLE runs (
     id          TEXT PRIMARY KEY,
     status      TEXT NOT NULL CHECK (status IN ${list(RUN_STATUSES)}),
     step        TEXT CHECK (step IS NULL OR step IN ('turn', 'handoff')),
     resumes     INTEGER NOT NULL DEFAULT 0 CHECK (resumes >= 0),
     record      TEXT NOT NULL,
     format      INTEGER NOT NULL DEFAULT ${RUN_FORMAT_UNTRACED}
   )`,
  `CREATE INDEX runs_active ON runs (status) WHERE status IN ('running', 'awaiting_human')`,
  ...RUN_EVENTS_DDL,
] as const;

/** The run statuses schema v5 wrote into the runs table's CHECK (v11 adds `cancelled`). */
const V5_RUN_STATUSES = ["running", "completed", "failed", "awaiting_human", "awaiting_approval", "requires_action"];

/** The runs table with `statuses` in its CHECK, under `name` (a rebuild creates it beside the old one). */
function runsTable(name: string, statuses: readonly string[] = RUN_STATUSES): string {
  return `CREATE TABLE ${name} (
     id          TEXT PRIMARY KEY,
     status      TEXT NOT NULL CHECK (status IN ${list(statuses)}),
     step        TEXT CHECK (step IS NULL OR step IN ${list(RUN_STEPS)}),
     resumes     INTEGER NOT NULL DEFAULT 0 CHECK (resumes >= 0),
     record      TEXT NOT NULL,
     work        TEXT,
     format      INTEGER NOT NULL DEFAULT ${RUN_FORMAT_UNTRACED}
   )`;
}

const RUNS_ACTIVE_INDEX = `CREATE INDEX runs_active ON runs (status) WHERE status IN ${list(ACTIVE_RUN_STATUSES)}`;

/** The runs tables as they are now, for a new object (see SESSION_SCHEMA). */
export const RUN_SCHEMA = [runsTable("runs"), RUNS_ACTIVE_INDEX, ...RUN_EVENTS_DDL] as const;

/**
 * v5: runs gain the paused statuses of tools and approvals, the `tools` step, and the work
 * left of the last model response (SQLite cannot alter a CHECK: the table is rebuilt).
 */
export const RUN_WORK_DDL = [
  runsTable("runs_v5", V5_RUN_STATUSES),
  `INSERT INTO runs_v5 (id, status, step, resumes, record, format) SELECT id, status, step, resumes, record, format FROM runs`,
  `DROP TABLE runs`,
  `ALTER TABLE runs_v5 RENAME TO runs`,
  RUNS_ACTIVE_INDEX,
] as const;

/** v11: a run may be cancelled (the CHECK gains `cancelled`: the table is rebuilt again). */
export const RUN_CANCEL_DDL = [
  runsTable("runs_v11"),
  `INSERT INTO runs_v11 (id, status, step, resumes, record, work, format)
     SELECT id, status, step, resumes, record, work, format FROM runs`,
  `DROP TABLE runs`,
  `ALTER TABLE runs_v11 RENAME TO runs`,
  RUNS_ACTIVE_INDEX,
] as const;

export interface RunRow {
  /** The record, without its events (they are rows of their own). */
  run: Run;
  step: RunStep | null;
  /** How many times a restart resumed it. */
  resumes: number;
  /** What is left of the last model response's tool calls (null: nothing). */
  work?: TurnWork | null;
  /**
   * The caller's span and trace state when a request's `traceparent` started the run (null:
   * the run's trace is its own). Left out, a save keeps null.
   */
  trace_parent?: RunTrace["parent"];
  /** The A2A request that started the run (null: another). Left out, a save keeps null. */
  origin?: RunOrigin | null;
}

interface StoredRun {
  record: string;
  step: RunStep | null;
  resumes: number;
  work: string | null;
  format: number;
}

const TraceParent = RunTrace.shape.parent;

function toRow(row: StoredRun): RunRow {
  if (row.format !== RUN_FORMAT && row.format !== RUN_FORMAT_UNTRACED)
    throw new Error(`run format ${row.format} is not ${RUN_FORMAT}`);
  const record = JSON.parse(row.record) as Record<string, unknown>;
  const untraced = row.format === RUN_FORMAT_UNTRACED;
  return {
    run: Run.parse(untraced ? { ...record, trace_id: derivedRunTrace(String(record.id)).trace_id } : record),
    step: row.step,
    resumes: row.resumes,
    work: row.work === null ? null : TurnWork.parse(JSON.parse(row.work)),
    trace_parent: untraced ? null : TraceParent.parse(record.trace_parent ?? null),
    origin: RunOrigin.nullable().parse(record.origin ?? null),
  };
}

/** The run's trace: its id, and the caller's context when a request carried one. */
export const traceOf = (row: RunRow): RunTrace => ({ trace_id: row.run.trace_id, parent: row.trace_parent ?? null });

const ACTIVE = list(ACTIVE_RUN_STATUSES);

/**
 * A status change is also a live event, written in the same transaction; a trace event is
 * one as it is stored here (LiveStore reads it).
 */
export class RunStore {
  constructor(
    private readonly sql: Sql,
    private readonly live?: LiveStore,
    /** A session before its first run holds no runs tables: reads answer "none" without making them. */
    private readonly tables: TablesHeld = ALL_TABLES,
  ) {}

  get(id: string): RunRow | null {
    if (!this.tables.has("runs")) return null;
    const row = this.sql<StoredRun>`SELECT record, step, resumes, work, format FROM runs WHERE id = ${id}`[0];
    return row ? toRow(row) : null;
  }

  /** A run's status alone (null: no such run), for a caller that asks often and needs the record only once it has changed. */
  status(id: string): RunStatus | null {
    if (!this.tables.has("runs")) return null;
    return this.sql<{ status: RunStatus }>`SELECT status FROM runs WHERE id = ${id}`[0]?.status ?? null;
  }

  /** The run that is running or waiting, if any (one at a time per session). */
  active(): RunRow | null {
    if (!this.tables.has("runs")) return null;
    const row = this.sql.exec<StoredRun>(
      `SELECT record, step, resumes, work, format FROM runs WHERE status IN ${ACTIVE} ORDER BY id LIMIT 1`,
    )[0];
    return row ? toRow(row) : null;
  }

  /** The session's first run (run ids sort by time): the one its routed first message started. */
  firstId(): string | null {
    if (!this.tables.has("runs")) return null;
    return this.sql<{ id: string | null }>`SELECT MIN(id) AS id FROM runs`[0]?.id ?? null;
  }

  save(row: RunRow): void {
    const { events: _events, ...run } = row.run;
    const before = this.sql<{ status: RunStatus }>`SELECT status FROM runs WHERE id = ${run.id}`[0]?.status ?? null;
    if (this.live) {
      const change = liveRunChange(row.run, before, Date.parse(run.updated_at));
      if (change) this.live.append([change]);
    }
    const work = row.work ? JSON.stringify(row.work) : null;
    const record = JSON.stringify({
      ...run,
      events: [],
      trace_parent: row.trace_parent ?? null,
      ...(row.origin ? { origin: row.origin } : {}),
    });
    // A step that keeps the status leaves `status` out: setting the column, even to the
    // value it holds, rewrites its entry in `runs_active` too (two rows written, not one).
    if (before === run.status) {
      this
        .sql`UPDATE runs SET step = ${row.step}, resumes = ${row.resumes}, record = ${record}, work = ${work}, format = ${RUN_FORMAT}
               WHERE id = ${run.id}`;
      return;
    }
    this
      .sql`INSERT INTO runs (id, status, step, resumes, record, work, format) VALUES (${run.id}, ${run.status}, ${row.step}, ${row.resumes}, ${record}, ${work}, ${RUN_FORMAT})
             ON CONFLICT (id) DO UPDATE SET status = excluded.status, step = excluded.step, resumes = excluded.resumes, record = excluded.record, work = excluded.work, format = excluded.format`;
  }

  addEvents(events: readonly TraceEvent[]): void {
    for (const event of events)
      this
        .sql`INSERT INTO run_events (id, run_id, event) VALUES (${event.event_id}, ${event.correlation_id}, ${JSON.stringify(event)})`;
  }

  /** A run's events in order; every run's when `runId` is left out. */
  events(runId?: string): TraceEvent[] {
    if (!this.tables.has("run_events")) return [];
    const rows =
      runId === undefined
        ? this.sql<{ event: string }>`SELECT event FROM run_events ORDER BY id`
        : this.sql<{ event: string }>`SELECT event FROM run_events WHERE run_id = ${runId} ORDER BY id`;
    return rows.map((r) => TraceEvent.parse(JSON.parse(r.event)));
  }

  /** A page of the session's events in order, after event id `after`; `next_after` is null on the last page. */
  eventPage(after: string | undefined, limit: number): { events: TraceEvent[]; next_after: string | null } {
    if (!this.tables.has("run_events")) return { events: [], next_after: null };
    const rows = this.sql<{
      event: string;
    }>`SELECT event FROM run_events WHERE id > ${after ?? ""} ORDER BY id LIMIT ${limit + 1}`;
    const events = rows.slice(0, limit).map((r) => TraceEvent.parse(JSON.parse(r.event)));
    return { events, next_after: rows.length > limit ? events.at(-1)!.event_id : null };
  }

  /** The run with its events, as the API returns it. */
  withEvents(run: Run): Run {
    return { ...run, events: this.events(run.id) };
  }

  /** The session's runs newest first, before run id `before` (exclusive), at most `limit` (without their events). */
  /** The runs that pass `query`'s filter, newest first, before its run id; and how many pass it in all. */
  page(query: RunListQuery): RunList {
    if (!this.tables.has("runs")) return { runs: [], total: 0 };
    const statuses = query.statuses ? JSON.stringify(query.statuses) : null;
    const after = query.updated_after ?? null;
    // The filter is SQL's, so that a page holds `limit` runs that pass it, however many do not.
    const rows = this.sql<StoredRun>`SELECT record, step, resumes, work, format FROM runs
      WHERE id < ${query.before ?? "~"}
        AND (${statuses} IS NULL OR status IN (SELECT value FROM json_each(${statuses})))
        AND (${after} IS NULL OR json_extract(record, '$.updated_at') >= ${after})
      ORDER BY id DESC LIMIT ${query.limit}`;
    const total = this.sql<{ n: number }>`SELECT COUNT(*) AS n FROM runs
      WHERE (${statuses} IS NULL OR status IN (SELECT value FROM json_each(${statuses})))
        AND (${after} IS NULL OR json_extract(record, '$.updated_at') >= ${after})`[0]?.n;
    return { runs: rows.map((row) => toRow(row).run), total: total ?? 0 };
  }

  count(status: RunStatus): number {
    if (!this.tables.has("runs")) return 0;
    return this.sql<{ n: number }>`SELECT COUNT(*) AS n FROM runs WHERE status = ${status}`[0]?.n ?? 0;
  }
}
