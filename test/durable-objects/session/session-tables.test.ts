import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SESSION_MIGRATIONS, SESSION_TABLES_DEFERRED } from "../../../durable-objects/session/session-store";
import { createSql, migrate } from "../../../durable-objects/shared/sql";
import { HandoffRequest } from "../../../src/schemas/handoff";
import { agentLoadOf, drainDue, registerAgents, sessionStub } from "../helpers";

/**
 * A session makes its eager tables when it is created and every other one when it first
 * uses it (SESSION_TABLES_DEFERRED): what it never uses it never makes, reads of what it
 * has not made answer "none", and an object made before, holding every table, works on.
 */

const EAGER = [...SESSION_TABLES_DEFERRED.eager].sort();

async function tablesOf(stub: DurableObjectStub): Promise<string[]> {
  return runInDurableObject(stub, (_instance, state) =>
    (state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table'").toArray() as { name: string }[])
      .map((t) => t.name)
      // The platform's own (_cf_…), SQLite's, and the schema version's.
      .filter((name) => !name.startsWith("_") && !name.startsWith("sqlite_"))
      .sort(),
  );
}

let counter = 0;
async function agents(limit?: number) {
  const n = ++counter;
  const [front, back] = await registerAgents(
    "alpha",
    { name: `tables-front-${n}`, handoffs: [`tables-back-${n}`], max_concurrent_sessions: limit },
    { name: `tables-back-${n}` },
  );
  return { front: front!.name, back: back!.name };
}

describe("a session's tables", () => {
  it("a session created, read every way and deleted makes none of the tables it did not use", async () => {
    const { front } = await agents();
    const { id, stub, rpc } = sessionStub();
    expect((await rpc.create("alpha", id, { agent: front, capacity: null, metadata: {}, ttl_s: 3600 })).ok).toBe(true);
    expect(await tablesOf(stub)).toEqual(EAGER);
    const reads = await Promise.all([
      rpc.get(),
      rpc.history(),
      rpc.audit(),
      rpc.inbox(),
      rpc.traceEvents({ limit: 10 }),
      rpc.getRun("run_x"),
      rpc.getHandoff("hof_x"),
      rpc.getFanout("fan_x"),
      rpc.memory(),
      rpc.deleteFact("k"),
    ]);
    expect(reads.map((r) => (r.ok ? "ok" : r.error.code))).toEqual([
      "ok",
      "ok",
      "ok",
      "ok",
      "ok",
      "RUN_NOT_FOUND",
      "HANDOFF_NOT_FOUND",
      "NOT_FOUND",
      "ok",
      "NOT_FOUND",
    ]);
    expect(reads[0]!.ok && reads[0]!.value).toMatchObject({ history_length: 0, agent_status: {} });
    // A new instance reads what the object holds, and finds the same.
    await evictDurableObject(stub);
    expect((await rpc.get()).ok).toBe(true);
    expect(await tablesOf(stub)).toEqual(EAGER);
    expect((await rpc.delete()).ok).toBe(true);
    // Deleted (the purge may already have wiped it): still nothing beyond the eager tables.
    expect((await tablesOf(stub)).every((t) => EAGER.includes(t))).toBe(true);
  });

  it("the first fact makes the memory", async () => {
    const { front } = await agents();
    const { id, stub, rpc } = sessionStub();
    await rpc.create("alpha", id, { agent: front, capacity: null, metadata: {}, ttl_s: 3600 });
    expect((await rpc.writeFact("plan", "pro")).ok).toBe(true);
    expect(await tablesOf(stub)).toEqual([...EAGER, "memory"].sort());
    const read = await rpc.memory();
    expect(read.ok && read.value.facts).toMatchObject([{ key: "plan", value: "pro", agent: null }]);
  });

  it("the first message makes the history; a handoff makes the handoff tables and live events", async () => {
    const { front, back } = await agents();
    const { id, stub, rpc } = sessionStub();
    await rpc.create("alpha", id, { agent: front, capacity: null, metadata: {}, ttl_s: 3600 });
    expect((await rpc.addMessage({ role: "user", content: "hello" })).ok).toBe(true);
    expect(await tablesOf(stub)).toEqual([...EAGER, "messages"].sort());
    const request = HandoffRequest.parse({ session_id: id, source_agent: front, target_agent: back, reason: "test" });
    const handed = await rpc.startHandoff({ request });
    expect(handed.ok && handed.value.handoff.status).toBe("completed");
    expect(await tablesOf(stub)).toEqual(
      [...EAGER, "messages", "handoffs", "handoff_requests", "session_lease", "lease_releases", "live_events"].sort(),
    );
    // The session row names the handoff whose context the current agent was handed.
    const view = await rpc.get();
    expect(view.ok && view.value).toMatchObject({ current_agent: back, history_length: 1 });
    const got = await rpc.getHandoff(handed.ok ? handed.value.handoff.id : "");
    expect(got.ok && got.value.context?.conversation_history).toMatchObject([{ role: "user", content: "hello" }]);
  });

  it("an agent with a limit: its lease makes the handoff tables at creation, and is released when the session goes", async () => {
    const { front } = await agents(5);
    const { id, stub, rpc } = sessionStub();
    await rpc.create("alpha", id, { agent: front, capacity: 5, metadata: {}, ttl_s: 3600 });
    expect(await tablesOf(stub)).toEqual(
      [...EAGER, "handoffs", "handoff_requests", "session_lease", "lease_releases"].sort(),
    );
    const held = async () => (await agentLoadOf("alpha", front)).leases.filter((l) => l.session_id === id).length;
    expect(await held()).toBe(1);
    await rpc.delete();
    await drainDue(stub);
    expect(await held()).toBe(0);
  });

  it("an object made before tables were made when needed, holding every table, is read and written as before", async () => {
    const { front, back } = await agents();
    const { id, stub, rpc } = sessionStub();
    await runInDurableObject(stub, (_instance, state) => {
      const sql = createSql(state.storage);
      migrate(state.storage, sql, SESSION_MIGRATIONS);
    });
    // Its next instance finds the tables as they are.
    await evictDurableObject(stub);
    const every = await tablesOf(stub);
    await rpc.create("alpha", id, { agent: front, capacity: null, metadata: {}, ttl_s: 3600, input: "hi" });
    const request = HandoffRequest.parse({ session_id: id, source_agent: front, target_agent: back, reason: "test" });
    expect((await rpc.startHandoff({ request })).ok).toBe(true);
    const view = await rpc.get();
    expect(view.ok && view.value).toMatchObject({ current_agent: back, history_length: 1 });
    expect(await tablesOf(stub)).toEqual(every);
    expect(every.length).toBeGreaterThan(EAGER.length + 10);
  });
});
