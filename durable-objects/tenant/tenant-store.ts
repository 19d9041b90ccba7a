import * as z from "zod";
import type { RecentRun } from "../../src/rpc/tenant";
import { QuotaOverrides } from "../../src/schemas/quotas";
import { COUNTERS, type Counter, type Usage } from "../../src/usage/counts";
import type { SchemaMigration, Sql } from "../shared/sql";

/**
 * The tenant object's rows: one per hour of usage, and the operator's overrides. The hour's
 * row also holds the current minute's run count (a minute lies within its hour), so admitting
 * a run writes one row.
 */

const COUNTER_COLUMNS = COUNTERS.map((c) => `${c} INTEGER NOT NULL DEFAULT 0 CHECK (${c} >= 0)`).join(",\n     ");

const TENANT_V1_DDL = [
  `CREATE TABLE usage (
     hour         INTEGER PRIMARY KEY,
     format       INTEGER NOT NULL CHECK (format = 1),
     ${COUNTER_COLUMNS},
     refused      TEXT NOT NULL,
     models       TEXT NOT NULL,
     run_minute   INTEGER NOT NULL DEFAULT 0,
     minute_runs  INTEGER NOT NULL DEFAULT 0
   )`,
  `CREATE TABLE overrides (
     id          INTEGER PRIMARY KEY CHECK (id = 1),
     format      INTEGER NOT NULL CHECK (format = 1),
     limits      TEXT NOT NULL,
     updated_at  INTEGER NOT NULL
   )`,
] as const;

/**
 * v2: the runs the tenant's sessions started or resumed in the last RECENT_RUNS_MS, written as
 * they start: a tenant-wide list reads them live, since D1 hears of a run only when its
 * session's outbox flushes (docs/a2a.md, ListTasks).
 */
const TENANT_V2_DDL = [
  `CREATE TABLE recent_runs (
     run_id      TEXT PRIMARY KEY,
     session_id  TEXT NOT NULL,
     agent       TEXT NOT NULL,
     at          INTEGER NOT NULL
   ) WITHOUT ROWID`,
] as const;

export const TENANT_MIGRATIONS: readonly SchemaMigration[] = [
  { version: 1, statements: TENANT_V1_DDL },
  { version: 2, statements: TENANT_V2_DDL },
];
export const TENANT_SCHEMA: SchemaMigration = { version: 2, statements: [...TENANT_V1_DDL, ...TENANT_V2_DDL] };

const Refused = z.record(z.string(), z.number().int().min(0));
const Models = z.record(
  z.string(),
  z.object({ calls: z.number().int(), input_tokens: z.number().int(), output_tokens: z.number().int() }),
);

/** One hour's row. */
export interface HourRow {
  hour: number;
  usage: Usage;
  /** The minute (since the epoch) `minute_runs` counts. */
  run_minute: number;
  minute_runs: number;
}

type StoredHour = Record<Counter, number> & {
  hour: number;
  format: number;
  refused: string;
  models: string;
  run_minute: number;
  minute_runs: number;
};

function toHourRow(row: StoredHour): HourRow {
  const counts: Partial<Record<Counter, number>> = {};
  for (const name of COUNTERS) if (row[name]) counts[name] = row[name];
  return {
    hour: row.hour,
    usage: { counts, refused: Refused.parse(JSON.parse(row.refused)), models: Models.parse(JSON.parse(row.models)) },
    run_minute: row.run_minute,
    minute_runs: row.minute_runs,
  };
}

const COLUMNS = ["hour", "format", ...COUNTERS, "refused", "models", "run_minute", "minute_runs"];

export class TenantStore {
  constructor(private readonly sql: Sql) {}

  hour(hour: number): HourRow | null {
    const row = this.sql<StoredHour>`SELECT * FROM usage WHERE hour = ${hour}`[0];
    return row ? toHourRow(row) : null;
  }

  /** The rows of the hours in [from, to), in order. */
  hours(from: number, to: number): HourRow[] {
    return this.sql<StoredHour>`SELECT * FROM usage WHERE hour >= ${from} AND hour < ${to} ORDER BY hour`.map(
      toHourRow,
    );
  }

  /** Sessions and tokens of the hours in [from, to) (a day so far), summed in SQL. */
  sums(from: number, to: number): { sessions: number; tokens: number } {
    const row = this.sql<{ sessions: number | null; tokens: number | null }>`
      SELECT SUM(sessions) AS sessions, SUM(input_tokens + output_tokens) AS tokens
      FROM usage WHERE hour >= ${from} AND hour < ${to}`[0];
    return { sessions: row?.sessions ?? 0, tokens: row?.tokens ?? 0 };
  }

  /** Writes the hour's row whole (one row written). */
  save(row: HourRow): void {
    const values = [
      row.hour,
      1,
      ...COUNTERS.map((name) => row.usage.counts[name] ?? 0),
      JSON.stringify(row.usage.refused),
      JSON.stringify(row.usage.models),
      row.run_minute,
      row.minute_runs,
    ];
    this.sql.exec(
      `INSERT OR REPLACE INTO usage (${COLUMNS.join(", ")}) VALUES (${COLUMNS.map(() => "?").join(", ")})`,
      ...values,
    );
  }

  /** D1 bytes written in the hours from `from` on. */
  bytesSince(from: number): number {
    return (
      this.sql<{ n: number | null }>`SELECT SUM(d1_bytes_written) AS n FROM usage WHERE hour >= ${from}`[0]?.n ?? 0
    );
  }

  /** Drops the hours before `hour`: usage is kept for USAGE_RETENTION_DAYS. */
  prune(hour: number): void {
    this.sql`DELETE FROM usage WHERE hour < ${hour}`;
  }

  /** Notes a run as started or resumed at `at` (a run noted again moves to its new time). */
  noteRun(run: RecentRun): void {
    this.sql`INSERT OR REPLACE INTO recent_runs (run_id, session_id, agent, at)
      VALUES (${run.run_id}, ${run.session_id}, ${run.agent}, ${run.at})`;
  }

  /** The runs noted at or after `since`, newest first, at most `limit`. */
  recentRuns(since: number, limit: number): RecentRun[] {
    return this.sql<RecentRun>`SELECT run_id, session_id, agent, at FROM recent_runs
      WHERE at >= ${since} ORDER BY at DESC LIMIT ${limit}`;
  }

  /** Forgets the runs noted before `before`. */
  pruneRecentRuns(before: number): void {
    this.sql`DELETE FROM recent_runs WHERE at < ${before}`;
  }

  overrides(): QuotaOverrides {
    const row = this.sql<{ limits: string }>`SELECT limits FROM overrides WHERE id = 1`[0];
    return row ? QuotaOverrides.parse(JSON.parse(row.limits)) : {};
  }

  setOverrides(overrides: QuotaOverrides | null, now: number): void {
    if (overrides === null || Object.keys(overrides).length === 0) {
      this.sql`DELETE FROM overrides WHERE id = 1`;
      return;
    }
    this
      .sql`INSERT OR REPLACE INTO overrides (id, format, limits, updated_at) VALUES (1, 1, ${JSON.stringify(overrides)}, ${now})`;
  }
}
