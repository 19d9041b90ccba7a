import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AGENT_MIGRATIONS, AGENT_SCHEMA } from "../../../durable-objects/agent/agent-schema";
import { createSql, migrate, type SchemaMigration, type Sql, schemaVersion } from "../../../durable-objects/shared/sql";
import { agentStub } from "../helpers";
import { onScratchObject, rowlessTables, shapeOf } from "../schema-shape";

/**
 * A new agent object is made with AGENT_SCHEMA in one step; an older one is migrated
 * version by version. Both must end with the same tables, columns and indexes, and an
 * older one keeps its leases, timers and waits through v4's rebuilds.
 */

let counter = 0;
const LATEST = AGENT_MIGRATIONS.at(-1)!.version;
const KEYED = ["leases", "timers", "waits"];

/** `fn` over an empty scratch object of this file's own. */
const scratch = <R>(fn: (sql: Sql, storage: DurableObjectStorage) => R) => onScratchObject("agent-schema", fn);

const upTo = (version: number): SchemaMigration[] => AGENT_MIGRATIONS.filter((m) => m.version <= version);

const rowless = rowlessTables;

describe("the agent object's schema", () => {
  it("made new in one step equals every migration applied in turn, with fewer statements", async () => {
    const stepwise = await scratch((sql, storage) => {
      migrate(storage, sql, AGENT_MIGRATIONS);
      return shapeOf(sql);
    });
    const direct = await scratch((sql, storage) => {
      migrate(storage, sql, AGENT_MIGRATIONS, AGENT_SCHEMA);
      return shapeOf(sql);
    });
    expect(direct).toEqual(stepwise);
    expect(direct.version).toBe(LATEST);
    expect(direct.objects.map((o) => `${o.type} ${o.name}`)).not.toContain("index timers_due");
    expect(AGENT_SCHEMA.statements.length).toBeLessThan(AGENT_MIGRATIONS.flatMap((m) => m.statements).length);
  });

  it("v4: leases, timers and waits lose their rowid and keep every row", async () => {
    const rows = (sql: Sql) => ({
      leases: sql`SELECT * FROM leases ORDER BY lease_id`,
      timers: sql`SELECT * FROM timers ORDER BY id`,
      waits: sql`SELECT * FROM waits ORDER BY message_id`,
    });
    const upgraded = await scratch((sql, storage) => {
      migrate(storage, sql, upTo(3));
      sql`INSERT INTO agent (id, status, max_concurrent_sessions, fencing_counter, updated_at) VALUES (1, 'active', 2, 2, 1)`;
      sql`INSERT INTO leases (lease_id, session_id, handoff_id, state, fencing_token, created_at, expires_at)
          VALUES ('lease_a', 'sess_a', 'h_a', 'held', 1, 1, NULL), ('lease_b', 'sess_b', 'h_b', 'tentative', 2, 2, 9999999999999)`;
      sql`INSERT INTO timers (id, key, kind, due_at, payload) VALUES ('t1', 'lease:lease_b', 'lease.expire', 9999999999999, '{"lease_id":"lease_b"}')`;
      sql`INSERT INTO waits (message_id, tenant, self, kind, to_agent, reason, collaboration_id, since)
          VALUES ('msg_1', 'alpha', 'triage', 'internal', 'billing', 'query', 'collab_1', 1)`;
      const before = rows(sql);
      const version = migrate(storage, sql, AGENT_MIGRATIONS, AGENT_SCHEMA);
      return { before, after: rows(sql), version, rowless: rowless(sql), shape: shapeOf(sql) };
    });
    expect(upgraded.after).toEqual(upgraded.before);
    expect(upgraded.after.leases).toHaveLength(2);
    expect(upgraded).toMatchObject({ version: LATEST, rowless: [...KEYED].sort() });
    const fresh = await scratch((sql, storage) => {
      migrate(storage, sql, AGENT_MIGRATIONS, AGENT_SCHEMA);
      return shapeOf(sql);
    });
    expect(upgraded.shape).toEqual(fresh);
  });

  it("an agent made before v4 still counts its leases and refuses past its capacity", async () => {
    const { stub, rpc } = agentStub("agent-schema", `old-agent-${++counter}`);
    await runInDurableObject(stub, (_instance, state) => {
      const sql = createSql(state.storage);
      migrate(state.storage, sql, upTo(3));
      sql`INSERT INTO agent (id, status, max_concurrent_sessions, fencing_counter, updated_at) VALUES (1, 'active', 2, 1, 1)`;
      sql`INSERT INTO leases (lease_id, session_id, handoff_id, state, fencing_token, created_at, expires_at)
          VALUES ('lease_a', 'sess_a', 'h_a', 'held', 1, 1, NULL)`;
    });
    const load = await rpc.load();
    expect(load).toMatchObject({ ok: true, value: { active_leases: 1, leases: [{ lease_id: "lease_a" }] } });
    expect(await rpc.acquire("sess_b", "h_b", 30_000, 2)).toMatchObject({ ok: true });
    expect(await rpc.acquire("sess_c", "h_c", 30_000, 2)).toMatchObject({
      ok: false,
      error: { code: "AGENT_UNAVAILABLE", details: { reason: "at_capacity", active: 2 } },
    });
    const version = await runInDurableObject(stub, (_instance, state) => schemaVersion(createSql(state.storage)));
    expect(version).toBe(LATEST);
  });
});
