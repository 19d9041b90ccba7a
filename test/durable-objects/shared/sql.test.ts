import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SESSION_MIGRATIONS, SessionStore } from "../../../durable-objects/session/session-store";
import {
  createSql,
  type DeferredTables,
  hasSchema,
  migrate,
  SchemaGate,
  type SchemaMigration,
  type Sql,
  SqlError,
  schemaVersion,
} from "../../../durable-objects/shared/sql";
import { agentStub } from "../helpers";

let counter = 0;
/** A scratch object whose storage the tests use directly. */
const scratch = () => agentStub("sql-tests", `scratch-${++counter}`).stub;

describe("sql helper", () => {
  it("binds template values as parameters, never as text", async () => {
    const rows = await runInDurableObject(scratch(), (_instance, state) => {
      const sql = createSql(state.storage);
      sql.exec("CREATE TABLE t (v TEXT)");
      const hostile = "x'); DROP TABLE t; --";
      sql`INSERT INTO t (v) VALUES (${hostile})`;
      return sql<{ v: string }>`SELECT v FROM t WHERE v = ${hostile}`;
    });
    expect(rows).toEqual([{ v: "x'); DROP TABLE t; --" }]);
  });

  it("wraps a failure with the query that failed", async () => {
    const error = await runInDurableObject(scratch(), (_instance, state) => {
      try {
        createSql(state.storage)`SELECT * FROM missing_table WHERE id = ${1}`;
        return null;
      } catch (e) {
        return {
          name: (e as Error).name,
          message: (e as Error).message,
          query: (e as SqlError).query,
          isSqlError: e instanceof SqlError,
        };
      }
    });
    expect(error).toMatchObject({
      name: "SqlError",
      isSqlError: true,
      query: "SELECT * FROM missing_table WHERE id = ?",
    });
    expect(error!.message).toMatch(/no such table: missing_table.*in: SELECT \* FROM missing_table/);
  });
});

describe("schema-version gate", () => {
  const v1: SchemaMigration = { version: 1, statements: ["CREATE TABLE a (x INTEGER)"] };
  const v2: SchemaMigration = { version: 2, statements: ["ALTER TABLE a ADD COLUMN y TEXT"] };

  it("applies each version once, in order, and records it", async () => {
    const result = await runInDurableObject(scratch(), (_instance, state) => {
      const sql = createSql(state.storage);
      const before = { present: hasSchema(sql), version: schemaVersion(sql) };
      const first = migrate(state.storage, sql, [v1]);
      const again = migrate(state.storage, sql, [v1]);
      const upgraded = migrate(state.storage, sql, [v2, v1]);
      sql`INSERT INTO a (x, y) VALUES (${1}, ${"yes"})`;
      return { before, first, again, upgraded, after: schemaVersion(sql), rows: sql`SELECT * FROM a` };
    });
    expect(result).toEqual({
      before: { present: false, version: 0 },
      first: 1,
      again: 1,
      upgraded: 2,
      after: 2,
      rows: [{ x: 1, y: "yes" }],
    });
  });

  it("rolls a failing migration back entirely", async () => {
    const result = await runInDurableObject(scratch(), (_instance, state) => {
      const sql = createSql(state.storage);
      migrate(state.storage, sql, [v1]);
      const broken: SchemaMigration = { version: 2, statements: ["CREATE TABLE b (z INTEGER)", "NOT SQL AT ALL"] };
      let failed = false;
      try {
        migrate(state.storage, sql, [v1, broken]);
      } catch {
        failed = true;
      }
      const tables = sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'b'`;
      return { failed, version: schemaVersion(sql), tables };
    });
    expect(result).toEqual({ failed: true, version: 1, tables: [] });
  });
});

describe("tables made when first needed", () => {
  const current: SchemaMigration = {
    version: 2,
    statements: [
      "CREATE TABLE a (x INTEGER)",
      "CREATE TABLE b (y INTEGER)",
      "CREATE INDEX b_y ON b (y)",
      "CREATE TABLE c (z INTEGER)",
      "CREATE TABLE d (w INTEGER)",
    ],
  };
  const deferred: DeferredTables = { eager: ["a"], together: [["c", "d"]] };
  /** A gate over `storage` as an object wires it: its SQL makes a deferred table a statement names. */
  const gated = (storage: DurableObjectStorage, migrations: readonly SchemaMigration[] = []) => {
    const sql: Sql = createSql(storage, (table) => gate.create(table));
    const gate = new SchemaGate(storage, sql, migrations, current, deferred);
    return { sql, gate };
  };
  const objects = (sql: Sql) =>
    sql<{ name: string }>`SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name`.map(
      (o) => o.name,
    );

  it("a new object makes its eager tables; a statement naming another makes it, its indexes and its companions, then runs", async () => {
    const result = await runInDurableObject(scratch(), (_instance, state) => {
      const { sql, gate } = gated(state.storage);
      const made = gate.ensure();
      const first = objects(sql);
      const held = ["a", "b", "c", "d"].map((t) => gate.has(t));
      sql`INSERT INTO b (y) VALUES (${7})`;
      const afterWrite = objects(sql);
      const read = sql`SELECT * FROM c`;
      return { made, again: gate.ensure(), first, held, afterWrite, read, last: objects(sql), b: sql`SELECT y FROM b` };
    });
    expect(result).toEqual({
      made: true,
      again: false,
      first: ["_schema", "a"],
      held: [true, false, false, false],
      afterWrite: ["_schema", "a", "b", "b_y"],
      read: [],
      last: ["_schema", "a", "b", "b_y", "c", "d"],
      b: [{ y: 7 }],
    });
  });

  it("make: the deferred tables named that the object lacks, with their indexes and companions, in one step", async () => {
    const result = await runInDurableObject(scratch(), (_instance, state) => {
      const { sql, gate } = gated(state.storage);
      gate.make(["b"]);
      const beforeSchema = objects(sql);
      gate.ensure();
      sql`INSERT INTO b (y) VALUES (${1})`;
      // b is held already, a is eager and "nowhere" no schema's: only c's group is made.
      state.storage.transactionSync(() => gate.make(["a", "b", "c", "nowhere"]));
      return {
        beforeSchema,
        held: ["b", "c", "d"].map((t) => gate.has(t)),
        last: objects(sql),
        b: sql`SELECT y FROM b`,
      };
    });
    expect(result).toEqual({
      beforeSchema: [],
      held: [true, true, true],
      last: ["_schema", "a", "b", "b_y", "c", "d"],
      b: [{ y: 1 }],
    });
  });

  it("a table no schema has fails as before; a script is not run again; an object with no schema makes nothing", async () => {
    const result = await runInDurableObject(scratch(), (_instance, state) => {
      const { sql, gate } = gated(state.storage);
      const failure = (run: () => unknown) => {
        try {
          run();
          return null;
        } catch (error) {
          return error instanceof SqlError ? error.message.split(" — ")[0] : String(error);
        }
      };
      const beforeSchema = failure(() => sql`SELECT * FROM b`);
      const untouched = objects(sql);
      gate.ensure();
      const unknown = failure(() => sql`SELECT * FROM nowhere`);
      const script = failure(() => sql.exec("INSERT INTO a (x) VALUES (1); INSERT INTO b (y) VALUES (2)"));
      return { beforeSchema, untouched, unknown, script, a: sql`SELECT COUNT(*) AS n FROM a`, b: gate.has("b") };
    });
    expect(result).toEqual({
      beforeSchema: expect.stringMatching(/no such table: b/),
      untouched: [],
      unknown: expect.stringMatching(/no such table: nowhere/),
      script: expect.stringMatching(/no such table: b/),
      a: [{ n: 1 }],
      b: false,
    });
  });

  it("a table made in a transaction that rolls back is gone, and the next statement makes it again", async () => {
    const result = await runInDurableObject(scratch(), (_instance, state) => {
      const { sql, gate } = gated(state.storage);
      gate.ensure();
      const rollBack = () => {
        try {
          state.storage.transactionSync(() => {
            sql`INSERT INTO b (y) VALUES (${1})`;
            throw new Error("rolled back");
          });
        } catch {
          // expected
        }
      };
      rollBack();
      const afterRollback = { objects: objects(sql), told: gate.has("b") };
      gate.forgetTables();
      const forgotten = gate.has("b");
      // Not told: the gate still thinks it holds b, and the statement makes it anyway.
      rollBack();
      sql`INSERT INTO b (y) VALUES (${2})`;
      return { afterRollback, forgotten, rows: sql`SELECT y FROM b` };
    });
    expect(result).toEqual({
      afterRollback: { objects: ["_schema", "a"], told: true },
      forgotten: false,
      rows: [{ y: 2 }],
    });
  });

  it("a later migration of a deferred table runs where the table is and waits where it is not", async () => {
    const v1: SchemaMigration = { version: 1, statements: ["CREATE TABLE a (x INTEGER)"] };
    const v2: SchemaMigration = { version: 2, statements: current.statements.slice(1) };
    const v3: SchemaMigration = { version: 3, table: "b", statements: ["ALTER TABLE b ADD COLUMN v TEXT"] };
    const columnsOfB = (sql: Sql) => sql<{ name: string }>`SELECT name FROM pragma_table_info('b')`.map((c) => c.name);
    const result = await runInDurableObject(scratch(), (_instance, state) => {
      const lazy = gated(state.storage);
      lazy.gate.ensure();
      const version = migrate(state.storage, lazy.sql, [v1, v2, v3]);
      return { version, objects: objects(lazy.sql) };
    });
    // Made new at v2 without b: v3 leaves b to be made as the newest schema has it.
    expect(result).toEqual({ version: 3, objects: ["_schema", "a"] });
    const whole = await runInDurableObject(scratch(), (_instance, state) => {
      const sql = createSql(state.storage);
      migrate(state.storage, sql, [v1, v2]);
      return { version: migrate(state.storage, sql, [v1, v2, v3]), b: columnsOfB(sql) };
    });
    expect(whole).toEqual({ version: 3, b: ["y", "v"] });
    // An old object whose earlier versions make b on the way gets v3 in the same step.
    const old = await runInDurableObject(scratch(), (_instance, state) => {
      const sql = createSql(state.storage);
      migrate(state.storage, sql, [v1]);
      return { version: migrate(state.storage, sql, [v1, v2, v3]), b: columnsOfB(sql) };
    });
    expect(old).toEqual({ version: 3, b: ["y", "v"] });
  });
});

describe("session tables", () => {
  it("refuse enum values outside their CHECK constraints", async () => {
    const refused = await runInDurableObject(scratch(), (_instance, state) => {
      const sql = createSql(state.storage);
      migrate(state.storage, sql, SESSION_MIGRATIONS);
      const attempts = [
        "INSERT INTO agent_status (agent, status, updated_at) VALUES ('a', 'asleep', 0)",
        "INSERT INTO messages (id, role, item, created_at) VALUES ('m', 'robot', '{}', 0)",
        "INSERT INTO audit (id, at, tenant, action, actor, actor_type, details) VALUES ('x', 't', 't', 'a.b', 'a', 'alien', '{}')",
        `INSERT INTO session (id, session_id, tenant, status, current_agent, handoff_stack, state, metadata, ttl_s, created_at, updated_at, expires_at)
         VALUES (1, 's', 't', 'zombie', 'a', '[]', '{}', '{}', 60, 0, 0, 0)`,
        `INSERT INTO session (id, session_id, tenant, status, current_agent, handoff_stack, state, metadata, ttl_s, created_at, updated_at, expires_at)
         VALUES (2, 's', 't', 'active', 'a', '[]', '{}', '{}', 60, 0, 0, 0)`,
      ];
      return attempts.map((q) => {
        try {
          sql.exec(q);
          return "accepted";
        } catch (e) {
          return /CHECK constraint failed/.test(String(e)) ? "refused" : String(e);
        }
      });
    });
    expect(refused).toEqual(["refused", "refused", "refused", "refused", "refused"]);
  });

  it("round-trip a session record", async () => {
    const record = {
      id: "ses_x",
      tenant: "alpha",
      status: "active" as const,
      current_agent: "b",
      handoff_stack: ["a", "b"],
      state: { n: 1, nested: { ok: true } },
      metadata: { m: "v" },
      ttl_s: 60,
      handoff_count: 1,
      in_flight_handoff: null,
      last_handoff_context: null,
      created_at: 1,
      updated_at: 2,
      expires_at: 60_002,
      ended_at: null,
    };
    const loaded = await runInDurableObject(scratch(), (_instance, state) => {
      const sql = createSql(state.storage);
      migrate(state.storage, sql, SESSION_MIGRATIONS);
      const store = new SessionStore(sql);
      store.save(record);
      return store.load();
    });
    expect(loaded).toEqual(record);
  });
});

describe("session schema v3: stored rows carry a format, old timers are upgraded", () => {
  it("splits the old handoff.timeout kind into handoff.deadline and handoff.sweep and adds the format columns", async () => {
    const after = await runInDurableObject(scratch(), (_instance, state) => {
      const sql = createSql(state.storage);
      // An object as the previous release left it: schema v2, with both uses of the old kind.
      migrate(
        state.storage,
        sql,
        SESSION_MIGRATIONS.filter((m) => m.version <= 2),
      );
      sql`INSERT INTO timers (id, key, kind, due_at, payload) VALUES ('d', 'handoff.deadline', 'handoff.timeout', 5, '{"handoff_id":"hof_1"}')`;
      sql`INSERT INTO timers (id, key, kind, due_at, payload) VALUES ('s', 'handoff.sweep', 'handoff.timeout', 6, '{"sweep":true}')`;
      const version = migrate(
        state.storage,
        sql,
        SESSION_MIGRATIONS.filter((m) => m.version <= 3),
      );
      return {
        version,
        timers: sql`SELECT id, key, kind, payload, format FROM timers ORDER BY id`,
        // Selecting the column proves it exists (an unknown column is an SQL error).
        formats: ["session", "handoffs"].map((t) => sql.exec(`SELECT format FROM ${t} LIMIT 0`).length),
      };
    });
    expect(after.version).toBe(3);
    expect(after.timers).toEqual([
      { id: "d", key: "handoff.deadline", kind: "handoff.deadline", payload: '{"handoff_id":"hof_1"}', format: 1 },
      { id: "s", key: "handoff.sweep", kind: "handoff.sweep", payload: "null", format: 1 },
    ]);
    expect(after.formats).toEqual([0, 0]);
  });
});

describe("session schema v5: runs keep their work, the inbox asks for approvals", () => {
  it("a v4 object's runs and inbox items survive the rebuild, and the new statuses and kind are accepted", async () => {
    const result = await runInDurableObject(scratch(), (_instance, state) => {
      const sql = createSql(state.storage);
      migrate(
        state.storage,
        sql,
        SESSION_MIGRATIONS.filter((m) => m.version <= 4),
      );
      sql`INSERT INTO runs (id, status, step, resumes, record) VALUES ('run_a', 'awaiting_human', NULL, 1, '{"x":1}')`;
      sql`INSERT INTO inbox_items (id, kind, status, item) VALUES ('inb_a', 'escalation', 'open', '{"y":2}')`;
      const version = migrate(
        state.storage,
        sql,
        SESSION_MIGRATIONS.filter((m) => m.version <= 5),
      );
      sql`INSERT INTO runs (id, status, step, record, work) VALUES ('run_b', 'requires_action', 'tools', '{}', '{"calls":[]}')`;
      sql`INSERT INTO inbox_items (id, kind, status, item) VALUES ('inb_b', 'approval', 'open', '{}')`;
      let refused = false;
      try {
        sql`INSERT INTO runs (id, status, record) VALUES ('run_c', 'sleeping', '{}')`;
      } catch {
        refused = true;
      }
      return {
        version,
        runs: sql`SELECT id, status, step, resumes, record, work FROM runs ORDER BY id`,
        inbox: sql`SELECT id, kind FROM inbox_items ORDER BY id`,
        refused,
      };
    });
    expect(result).toEqual({
      version: 5,
      runs: [
        { id: "run_a", status: "awaiting_human", step: null, resumes: 1, record: '{"x":1}', work: null },
        { id: "run_b", status: "requires_action", step: "tools", resumes: 0, record: "{}", work: '{"calls":[]}' },
      ],
      inbox: [
        { id: "inb_a", kind: "escalation" },
        { id: "inb_b", kind: "approval" },
      ],
      refused: true,
    });
  });
});
