import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { LiveStore } from "../../../durable-objects/session/live/live-store";
import {
  SESSION_MIGRATIONS,
  SESSION_SCHEMA,
  SESSION_TABLES_DEFERRED,
} from "../../../durable-objects/session/session-store";
import { Outbox } from "../../../durable-objects/shared/outbox";
import { tableOf } from "../../../durable-objects/shared/schema-text";
import {
  createSql,
  migrate,
  SchemaGate,
  type SchemaMigration,
  type Sql,
  schemaVersion,
} from "../../../durable-objects/shared/sql";
import { liveFromTrace } from "../../../src/runtime/live-events";
import { traceEvent } from "../../../src/runtime/run-record";
import type { StoredLiveEvent } from "../../../src/schemas/live";
import { agentStub } from "../helpers";
import { rowlessTables, type Shape, shapeOf } from "../schema-shape";

/**
 * A new session object is made with SESSION_SCHEMA's eager tables in one step, and each of
 * its other tables when first needed; an older one is migrated version by version. Both
 * must end with the same tables, columns, constraints and indexes.
 */

let counter = 0;

/** The schema an empty scratch object ends with after `steps` (each a migrate call). */
async function schemaAfter(
  steps: { migrations: readonly SchemaMigration[]; current?: SchemaMigration }[],
): Promise<Shape> {
  return runInDurableObject(agentStub("schema-tests", `scratch-${++counter}`).stub, (_instance, state) => {
    const sql = createSql(state.storage);
    for (const step of steps) migrate(state.storage, sql, step.migrations, step.current);
    return shapeOf(sql);
  });
}

/** The newest schema version. */
const LATEST = SESSION_MIGRATIONS.at(-1)!.version;

/** SESSION_SCHEMA's tables, in its order. */
const ALL_TABLES = [...new Set(SESSION_SCHEMA.statements.flatMap((s) => tableOf(s) ?? []))];

/**
 * A new object through the session's gate, as a SessionDO makes it: the tables it holds
 * at once, then its shape once every table in `use` was named by a statement, in that order.
 */
async function madeWhenNeeded(use: readonly string[]): Promise<{ first: string[]; shape: Shape }> {
  return runInDurableObject(agentStub("schema-tests", `scratch-${++counter}`).stub, (_instance, state) => {
    const sql: Sql = createSql(state.storage, (table) => gate.create(table));
    const gate = new SchemaGate(state.storage, sql, SESSION_MIGRATIONS, SESSION_SCHEMA, SESSION_TABLES_DEFERRED);
    gate.ensure();
    const first = shapeOf(sql)
      .objects.filter((o) => o.type === "table")
      .map((o) => o.name);
    // A read of each table, as a store's first statement would be.
    for (const table of use) sql.exec(`SELECT COUNT(*) AS n FROM ${table}`);
    return { first, shape: shapeOf(sql) };
  });
}

/** `fn` over a scratch object migrated up to `version`: an object an older release made. */
function madeAt<R>(version: number, fn: (sql: Sql, storage: DurableObjectStorage) => R): Promise<R> {
  return runInDurableObject(agentStub("schema-tests", `scratch-${++counter}`).stub, (_instance, state) => {
    const sql = createSql(state.storage);
    migrate(
      state.storage,
      sql,
      SESSION_MIGRATIONS.filter((m) => m.version <= version),
    );
    return fn(sql, state.storage);
  });
}

describe("the session object's schema", () => {
  it("made new in one step equals every migration applied in turn", async () => {
    const stepwise = await schemaAfter([{ migrations: SESSION_MIGRATIONS }]);
    const direct = await schemaAfter([{ migrations: SESSION_MIGRATIONS, current: SESSION_SCHEMA }]);
    expect(direct).toEqual(stepwise);
    expect(direct.version).toBe(SESSION_MIGRATIONS.at(-1)!.version);
    expect(Object.keys(direct.columns)).toContain("runs");
  });

  it("a new object holds only the eager tables; once each other table is named, it equals every migration applied", async () => {
    const stepwise = await schemaAfter([{ migrations: SESSION_MIGRATIONS }]);
    const { first, shape } = await madeWhenNeeded(ALL_TABLES);
    expect(first.sort()).toEqual([...SESSION_TABLES_DEFERRED.eager].sort());
    expect(shape).toEqual(stepwise);
    // In the other order too: no table depends on another having been made first.
    expect((await madeWhenNeeded([...ALL_TABLES].reverse())).shape).toEqual(stepwise);
  });

  it("a table made when needed comes with its indexes and the tables made together with it", async () => {
    const { shape } = await madeWhenNeeded(["runs", "session_lease"]);
    const names = shape.objects.map((o) => `${o.type} ${o.name}`).sort();
    expect(names).toEqual(
      [
        ...SESSION_TABLES_DEFERRED.eager.map((t) => `table ${t}`),
        "index audit_sent",
        "table runs",
        "index runs_active",
        "table handoffs",
        "index handoffs_open",
        "table handoff_requests",
        "table session_lease",
        "table lease_releases",
      ].sort(),
    );
  });

  it("an object made by an older version is migrated from where it is, not made again", async () => {
    const stepwise = await schemaAfter([{ migrations: SESSION_MIGRATIONS }]);
    const old = SESSION_MIGRATIONS.filter((m) => m.version <= 3);
    const upgraded = await schemaAfter([
      { migrations: old },
      { migrations: SESSION_MIGRATIONS, current: SESSION_SCHEMA },
    ]);
    expect(upgraded).toEqual(stepwise);
  });

  it("has fewer statements than the migrations it stands for", () => {
    expect(SESSION_SCHEMA.statements.length).toBeLessThan(SESSION_MIGRATIONS.flatMap((m) => m.statements).length);
  });

  it("v13: an object's pending audit rows are still found once the pending index holds only them", async () => {
    const found = await madeAt(12, (sql, storage) => {
      for (const [id, flushed] of [
        ["01AAAAAAAAAAAAAAAAAAAAAAAA", 1],
        ["01BBBBBBBBBBBBBBBBBBBBBBBB", 0],
      ] as const)
        sql`INSERT INTO audit (id, at, tenant, action, actor, actor_type, details, flushed)
            VALUES (${id}, '2026-01-01T00:00:00.000Z', 'alpha', 'session.created', 'api', 'user', '{}', ${flushed})`;
      const version = migrate(storage, sql, SESSION_MIGRATIONS);
      const outbox = new Outbox(sql);
      return { version, pending: outbox.pendingCount(), all: outbox.list({ limit: 10 }).map((r) => r.flushed) };
    });
    expect(found).toEqual({ version: SESSION_MIGRATIONS.at(-1)!.version, pending: 1, all: [true, false] });
  });

  it("v14–v17: the tables keyed by id lose their rowid and keep every row, in an object holding them or not", async () => {
    const KEYED = ["audit", "timers", "live_events", "run_events", "runs"];
    const rows = (sql: Sql) =>
      Object.fromEntries(
        KEYED.map((t) => [t, sql.exec<{ id: string }>(`SELECT id FROM ${t} ORDER BY id`).map((r) => r.id)]),
      );
    const rowless = rowlessTables;
    const upgraded = await madeAt(13, (sql, storage) => {
      for (const id of ["01A", "01B"]) {
        sql`INSERT INTO audit (id, at, tenant, action, actor, actor_type, details, flushed)
            VALUES (${id}, '2026-01-01T00:00:00.000Z', 'alpha', 'session.created', 'api', 'user', '{}', ${id === "01A" ? 1 : 0})`;
        sql`INSERT INTO timers (id, key, kind, due_at) VALUES (${id}, ${`k${id}`}, 'session.expire', 1)`;
        sql`INSERT INTO live_events (id, run_id, event) VALUES (${id}, 'run_1', '{}')`;
        sql`INSERT INTO run_events (id, run_id, event) VALUES (${id}, 'run_1', '{}')`;
        sql`INSERT INTO runs (id, status, record) VALUES (${id}, 'running', '{}')`;
      }
      const before = rows(sql);
      const version = migrate(storage, sql, SESSION_MIGRATIONS);
      return { before, after: rows(sql), version, rowless: rowless(sql), pending: new Outbox(sql).pendingCount() };
    });
    expect(upgraded.after).toEqual(upgraded.before);
    expect(upgraded.after.runs).toEqual(["01A", "01B"]);
    // v23 makes the compactions and the memory, v25 the trace exports, keyed from the start.
    expect(upgraded).toMatchObject({
      version: LATEST,
      rowless: [...KEYED, "compactions", "memory", "telemetry_exports"].sort(),
      pending: 1,
    });
    // An object that had not made its runs and live events by v13 skips their rebuilds and makes them as they are now.
    const lazy = await madeAt(13, (old, storage) => {
      old.exec("DROP TABLE live_events; DROP TABLE run_events; DROP TABLE runs");
      const sql: Sql = createSql(storage, (table) => gate.create(table));
      const gate = new SchemaGate(storage, sql, SESSION_MIGRATIONS, SESSION_SCHEMA, SESSION_TABLES_DEFERRED);
      gate.ensure();
      const tables = (name: string) =>
        sql<{ n: number }>`SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = ${name}`[0]!.n;
      const absent = ["live_events", "run_events", "runs"].filter((t) => tables(t) === 0);
      sql.exec("SELECT COUNT(*) FROM live_events");
      return { version: schemaVersion(sql), absent, rowless: rowless(sql) };
    });
    expect(lazy).toEqual({
      version: LATEST,
      absent: ["live_events", "run_events", "runs"],
      rowless: ["audit", "compactions", "live_events", "memory", "telemetry_exports", "timers"],
    });
  });

  it("v19: an object's records sent stay sent behind one mark, and one pending below a sent one is sent again", async () => {
    const found = await madeAt(18, (sql, storage) => {
      for (const [id, flushed] of [
        ["01AAAAAAAAAAAAAAAAAAAAAAAA", 1],
        ["01BBBBBBBBBBBBBBBBBBBBBBBB", 1],
        ["01CCCCCCCCCCCCCCCCCCCCCCCC", 0],
        ["01DDDDDDDDDDDDDDDDDDDDDDDD", 1],
      ] as const)
        sql`INSERT INTO audit (id, at, tenant, action, actor, actor_type, details, flushed)
            VALUES (${id}, '2026-01-01T00:00:00.000Z', 'alpha', 'session.created', 'api', 'user', '{}', ${flushed})`;
      const version = migrate(storage, sql, SESSION_MIGRATIONS);
      const outbox = new Outbox(sql);
      return {
        version,
        marks: sql<{ id: string }>`SELECT id FROM audit WHERE flushed = 1`.map((r) => r.id),
        pending: outbox.pendingCount(),
        all: outbox.list({ limit: 10 }).map((r) => r.flushed),
      };
    });
    expect(found).toEqual({
      version: LATEST,
      marks: ["01BBBBBBBBBBBBBBBBBBBBBBBB"],
      pending: 2,
      all: [true, true, false, false],
    });
  });

  it("v20–v21: live events and a run's trace, kept before in both, are answered once each and in order", async () => {
    const trace = traceEvent({ id: "run_1", session_id: "ses_1" }, "agent_start", "support", Date.UTC(2026, 0, 1), {});
    const later = Date.UTC(2026, 0, 2);
    // A row of its day: its data is not what a run_completed carries now, and is read back as it was.
    const change: StoredLiveEvent = {
      ...{ id: traceEvent({ id: "run_1", session_id: "ses_1" }, "agent_complete", "support", later, {}).event_id },
      ...{ type: "run_completed", session_id: "ses_1", run_id: "run_1", at: new Date(later).toISOString(), data: {} },
    };
    const replay = await madeAt(19, (sql, storage) => {
      sql`INSERT INTO run_events (id, run_id, event) VALUES (${trace.event_id}, 'run_1', ${JSON.stringify(trace)})`;
      for (const event of [liveFromTrace(trace), change])
        sql`INSERT INTO live_events (id, run_id, event) VALUES (${event.id}, ${event.run_id}, ${JSON.stringify(event)})`;
      migrate(storage, sql, SESSION_MIGRATIONS);
      const live = new LiveStore(sql);
      const indexes = sql<{
        name: string;
      }>`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('live_events', 'run_events')`;
      return { all: live.after("", 10), run: live.after("", 10, "run_1"), latest: live.latest(), indexes };
    });
    expect(replay.all).toEqual([liveFromTrace(trace), change]);
    expect(replay.run).toEqual([liveFromTrace(trace), change]);
    expect(replay.latest).toBe(change.id);
    expect(replay.indexes).toEqual([]);
  });

  it("v18: the history keeps its seqs without AUTOINCREMENT, and the next message follows the last", async () => {
    const history = await madeAt(17, (sql, storage) => {
      for (const id of ["m1", "m2", "m3"])
        sql`INSERT INTO messages (id, role, item, created_at) VALUES (${id}, 'user', '{}', 1)`;
      migrate(storage, sql, SESSION_MIGRATIONS);
      sql`INSERT INTO messages (id, role, item, created_at) VALUES ('m4', 'user', '{}', 2)`;
      const made = sql<{ sql: string }>`SELECT sql FROM sqlite_master WHERE name = 'messages'`[0]!.sql;
      return {
        seqs: sql<{ id: string; seq: number }>`SELECT id, seq FROM messages ORDER BY seq`,
        autoincrement: made.includes("AUTOINCREMENT"),
      };
    });
    expect(history).toEqual({
      seqs: [
        { id: "m1", seq: 1 },
        { id: "m2", seq: 2 },
        { id: "m3", seq: 3 },
        { id: "m4", seq: 4 },
      ],
      autoincrement: false,
    });
  });
});
