import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SESSION_MIGRATIONS, SESSION_SCHEMA, SessionStore } from "../../../durable-objects/session/session-store";
import { createSql, migrate, type Sql } from "../../../durable-objects/shared/sql";
import { type HandoffContext, HandoffRequest } from "../../../src/schemas/handoff";
import { agentStub, registerAgents, sessionStub } from "../helpers";

let counter = 0;

/** Rows inserted, updated or deleted by `write`, as SQLite counts them. */
function changesBy(sql: Sql, write: () => void): number {
  const total = () => sql<{ n: number }>`SELECT total_changes() AS n`[0]!.n;
  const before = total();
  write();
  return total() - before;
}

describe("the session store", () => {
  it("names the last handoff in the session row and reads its context from the handoff's row", async () => {
    const n = ++counter;
    await registerAgents("alpha", { name: `desk-${n}`, handoffs: [`back-${n}`] }, { name: `back-${n}` });
    const { id, stub, rpc } = sessionStub();
    await rpc.create("alpha", id, { agent: `desk-${n}`, capacity: null, metadata: {}, ttl_s: 3600 });
    for (let i = 0; i < 40; i++)
      await rpc.addMessage({ role: i % 2 ? "assistant" : "user", content: `message ${i} `.repeat(20) });
    const handed = await rpc.startHandoff({
      request: HandoffRequest.parse({
        session_id: id,
        source_agent: `desk-${n}`,
        target_agent: `back-${n}`,
        reason: "test",
      }),
    });
    if (!handed.ok) throw new Error(handed.error.message);
    const context = handed.value.handoff.context!;
    expect(context.conversation_history).toHaveLength(40);

    const stored = await runInDurableObject(stub, (_instance, state) => {
      const sql = createSql(state.storage);
      const row = sql<Record<string, unknown>>`SELECT * FROM session`[0]!;
      const store = new SessionStore(sql);
      const session = store.load()!;
      // A later commit (a message, a state patch) rewrites the session row alone, without the context.
      const changes = changesBy(sql, () => store.save({ ...session, updated_at: session.updated_at + 1 }));
      return { row, changes };
    });
    expect(stored.row).not.toHaveProperty("last_handoff_context");
    expect(stored.row.last_handoff_id).toBe(handed.value.handoff.id);
    expect(stored.changes).toBe(1);

    // A new instance of the object reads the context back as the agent was handed it.
    await evictDurableObject(stub);
    const view = await rpc.get();
    expect(view.ok && view.value.last_handoff_context).toEqual(context);
  });

  it("a session object made before v10 keeps its context through the migration", async () => {
    const context: HandoffContext = {
      from_agent: "triage",
      to_agent: "billing",
      reason: "a refund",
      summary: null,
      context: {},
      payload: {},
      task: null,
      conversation_history: [{ role: "user", content: "my refund" }],
      metadata: {
        timestamp: new Date(0).toISOString(),
        handoff_chain: ["triage", "billing"],
        chain_depth: 1,
        correlation_id: "cor_1",
        handoff_id: "hof_old",
        mode: "transfer",
        history_filters: [],
      },
    };
    const loaded = await runInDurableObject(
      agentStub("session-store-tests", `scratch-${++counter}`).stub,
      (_instance, state) => {
        const sql = createSql(state.storage);
        migrate(
          state.storage,
          sql,
          SESSION_MIGRATIONS.filter((m) => m.version < 10),
        );
        // As v9 left them: the context in the session row, and in the row of the handoff that made it.
        sql`INSERT INTO session (id, session_id, tenant, status, current_agent, handoff_stack, state, metadata, ttl_s, handoff_count,
            last_handoff_context, created_at, updated_at, expires_at)
          VALUES (1, 'ses_old', 'alpha', 'active', 'billing', '["triage","billing"]', '{}', '{}', 3600, 1, ${JSON.stringify(context)}, 0, 0, 3600000)`;
        sql`INSERT INTO handoffs (id, status, step, record, created_at, updated_at)
          VALUES ('hof_old', 'completed', NULL, ${JSON.stringify({ id: "hof_old", context })}, 0, 0)`;
        migrate(state.storage, sql, SESSION_MIGRATIONS, SESSION_SCHEMA);
        return new SessionStore(sql).load();
      },
    );
    expect(loaded).toMatchObject({
      id: "ses_old",
      current_agent: "billing",
      handoff_count: 1,
      last_handoff_context: context,
    });
  });
});
