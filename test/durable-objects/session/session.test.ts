import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { FLUSH_BACKOFF_MS, FLUSH_WINDOW_MS } from "../../../src/audit/outbox-policy";
import type { SessionCreateArgs, SessionRpc } from "../../../src/rpc/session";
import { call } from "../../api/helpers";
import { spyOnConsoleError } from "../../console-spy";
import { shardOf } from "../../shards";
import type { SessionDO } from "../../worker";
import { auditTableDown, d1Audit, drainDue, flushOutbox, sessionStub, setClock, timersOf } from "../helpers";

const args: SessionCreateArgs = { agent: "support", capacity: null, metadata: {}, ttl_s: 3600 };
const FUTURE = Date.now() + 3_600_000;

async function pending(rpc: SessionRpc): Promise<number> {
  const page = await rpc.audit();
  if (!page.ok) throw new Error(page.error.message);
  return page.value.pending;
}

describe("SessionDO audit outbox", () => {
  it("writes audit rows with the change and flushes them to D1 on the alarm", async () => {
    const { id, stub, rpc } = sessionStub();
    await rpc.create("alpha", id, { ...args, input: "hello" });
    await rpc.patchState({ set: { a: 1 } });
    await flushOutbox(stub);
    expect((await d1Audit(id)).map((r) => r.action)).toEqual([
      "session.created",
      "session.message_added",
      "session.state_updated",
    ]);
    expect(await pending(rpc)).toBe(0);
    const local = await rpc.audit();
    expect(local.ok && local.value.records.every((r) => r.flushed)).toBe(true);
  });

  it("batches a busy session's records: what it writes within FLUSH_WINDOW_MS of a record reaches D1 in that record's flush", async () => {
    const { id, stub, rpc } = sessionStub();
    await setClock(stub, FUTURE);
    await rpc.create("alpha", id, args);
    expect((await timersOf(stub)).timers.find((t) => t.kind === "outbox.flush")?.due_at).toBe(FUTURE + FLUSH_WINDOW_MS);
    await setClock(stub, FUTURE + 100);
    await rpc.addMessage({ role: "user", content: "one" });
    await rpc.patchState({ set: { a: 1 } });
    // The first record's flush stands; the later records join it.
    expect((await timersOf(stub)).timers.filter((t) => t.kind === "outbox.flush").map((t) => t.due_at)).toEqual([
      FUTURE + FLUSH_WINDOW_MS,
    ]);
    await drainDue(stub);
    expect(await d1Audit(id)).toHaveLength(0);
    await setClock(stub, FUTURE + FLUSH_WINDOW_MS);
    await drainDue(stub);
    expect((await d1Audit(id)).map((r) => r.action)).toEqual([
      "session.created",
      "session.message_added",
      "session.state_updated",
    ]);
    expect(await pending(rpc)).toBe(0);
    // The next record opens the next window.
    await setClock(stub, FUTURE + 2_000);
    await rpc.patchState({ set: { a: 2 } });
    expect((await timersOf(stub)).timers.find((t) => t.kind === "outbox.flush")?.due_at).toBe(
      FUTURE + 2_000 + FLUSH_WINDOW_MS,
    );
  });

  it("parks the flush's timer after a flush, and the next record's flush rewrites it in place", async () => {
    const { id, stub, rpc } = sessionStub();
    await rpc.create("alpha", id, args);
    await flushOutbox(stub);
    const flushId = () =>
      runInDurableObject(stub, (_instance, state) => {
        return state.storage.sql.exec("SELECT id FROM timers WHERE key = 'outbox.flush'").one().id;
      });
    const parked = await timersOf(stub);
    expect(parked.parked).toEqual(["outbox.flush"]);
    expect(parked.timers.map((t) => t.kind)).toEqual(["session.expire"]);
    expect(parked.alarm).toBe(parked.timers[0]!.due_at);
    const first = await flushId();
    await rpc.addMessage({ role: "user", content: "one" });
    const again = await timersOf(stub);
    expect(again.parked).toEqual([]);
    expect(again.timers.map((t) => t.kind)).toContain("outbox.flush");
    expect(await flushId()).toBe(first);
    await flushOutbox(stub);
    expect((await d1Audit(id)).map((r) => r.action)).toEqual(["session.created", "session.message_added"]);
    expect((await timersOf(stub)).parked).toEqual(["outbox.flush"]);
  });

  it("flushing the same rows twice makes no duplicates (INSERT OR IGNORE by id)", async () => {
    const { id, stub, rpc } = sessionStub();
    await rpc.create("alpha", id, args);
    await rpc.addMessage({ role: "user", content: "one" });
    await flushOutbox(stub);
    const first = await d1Audit(id);
    await runInDurableObject(stub, async (instance: SessionDO, state) => {
      state.storage.sql.exec("UPDATE audit SET flushed = 0");
      state.storage.sql.exec(
        // The flush's timer is parked after the first flush: due again at once.
        "INSERT INTO timers (id, key, kind, due_at) VALUES ('again', 'outbox.flush', 'outbox.flush', 0) ON CONFLICT (key) DO UPDATE SET due_at = 0",
      );
      await instance.alarm();
    });
    expect(await d1Audit(id)).toEqual(first);
    expect(first).toHaveLength(2);
  });

  it("keeps every row while D1 fails, backs off, and delivers each exactly once when D1 is back", async () => {
    const { id, stub, rpc } = sessionStub();
    await auditTableDown(true);
    try {
      // A clock an hour ahead: the real alarm stays in the future while the test drives it.
      await setClock(stub, FUTURE);
      await rpc.create("alpha", id, { ...args, input: "first" });
      await rpc.addMessage({ role: "agent", content: "second" });
      await rpc.setAgentStatus("support", "busy");
      let now = FUTURE + FLUSH_WINDOW_MS;
      await setClock(stub, now);
      for (let attempt = 1; attempt <= 6; attempt++) {
        expect(await runDurableObjectAlarm(stub)).toBe(true);
        const { timers, alarm } = await timersOf(stub);
        const flush = timers.find((t) => t.kind === "outbox.flush")!;
        expect(flush.attempts).toBe(attempt);
        expect(flush.last_error).toMatch(/audit_log/);
        const backoff = FLUSH_BACKOFF_MS[Math.min(attempt, FLUSH_BACKOFF_MS.length) - 1]!;
        expect(flush.due_at).toBe(now + backoff);
        expect(alarm).toBe(Math.min(...timers.map((t) => t.due_at)));
        expect(await pending(rpc)).toBe(4);
        now = flush.due_at;
        await setClock(stub, now);
      }
      expect(await d1Audit(id).catch(() => [])).toEqual([]);
    } finally {
      await auditTableDown(false);
    }
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const rows = await d1Audit(id);
    expect(rows.map((r) => r.action)).toEqual([
      "session.created",
      "session.message_added",
      "session.message_added",
      "session.agent_status_changed",
    ]);
    expect(new Set(rows.map((r) => r.id)).size).toBe(4);
    expect(await pending(rpc)).toBe(0);
    expect((await timersOf(stub)).timers.map((t) => t.kind)).toEqual(["session.expire"]);
  });

  it("a change made during a backoff waits for the scheduled retry instead of resetting it", async () => {
    const { id, stub, rpc } = sessionStub();
    await auditTableDown(true);
    try {
      await setClock(stub, FUTURE);
      await rpc.create("alpha", id, args);
      await setClock(stub, FUTURE + FLUSH_WINDOW_MS);
      await runDurableObjectAlarm(stub);
      await rpc.patchState({ set: { b: 2 } });
      const flush = (await timersOf(stub)).timers.find((t) => t.kind === "outbox.flush")!;
      expect(flush).toMatchObject({ attempts: 1, due_at: FUTURE + FLUSH_WINDOW_MS + FLUSH_BACKOFF_MS[0] });
    } finally {
      await auditTableDown(false);
    }
  });
});

describe("SessionDO timers", () => {
  it("multiplexes kinds on one alarm, armed at the earliest due time", async () => {
    const { id, stub, rpc } = sessionStub();
    await setClock(stub, FUTURE);
    await rpc.create("alpha", id, { ...args, ttl_s: 600 });
    const before = await timersOf(stub);
    expect(before.timers.map((t) => [t.kind, t.due_at])).toEqual([
      ["outbox.flush", FUTURE + FLUSH_WINDOW_MS],
      ["session.expire", FUTURE + 600_000],
    ]);
    expect(before.alarm).toBe(FUTURE + FLUSH_WINDOW_MS);
    await setClock(stub, FUTURE + FLUSH_WINDOW_MS);
    await runDurableObjectAlarm(stub);
    const after = await timersOf(stub);
    expect(after.timers.map((t) => t.kind)).toEqual(["session.expire"]);
    expect(after.alarm).toBe(FUTURE + 600_000);
  });

  it("never throws from the alarm, even when its own tables are broken, and logs why", async () => {
    const errors = spyOnConsoleError();
    const { id, stub, rpc } = sessionStub();
    await setClock(stub, FUTURE);
    await rpc.create("alpha", id, args);
    await setClock(stub, FUTURE + FLUSH_WINDOW_MS);
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec("INSERT INTO timers (id, kind, due_at) VALUES ('mystery', 'no.such_kind', 0)");
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await timersOf(stub)).timers.map((t) => t.kind)).toEqual(["session.expire"]);
    expect(errors.mock.calls).toEqual([["timer mystery: no handler for kind 'no.such_kind', dropped"]]);

    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec("ALTER TABLE timers RENAME TO timers_gone");
    });
    await expect(runDurableObjectAlarm(stub)).resolves.toBe(true);
    expect(errors).toHaveBeenCalledTimes(2);
    expect(errors.mock.calls[1]).toEqual([
      "SessionDO alarm failed; re-arming",
      expect.objectContaining({ name: "SqlError", message: expect.stringContaining("no such table: timers") }),
    ]);
    const alarm = await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
    expect(alarm).toBe(FUTURE + FLUSH_WINDOW_MS + 30_000);
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec("ALTER TABLE timers_gone RENAME TO timers");
    });
  });
});

describe("SessionDO TTL", () => {
  it("expires an idle session: audit, summary in D1, storage deleted, then 410 with the expiry time", async () => {
    await call("PUT", "/v1/agents/support", { name: "support" });
    const created = await call("POST", "/v1/sessions", { agent: "support", ttl_s: 60, input: "hi" });
    const { id, stub } = sessionStub("alpha", created.json.id);
    const expiresAt = Date.parse(created.json.expires_at);
    await setClock(stub, expiresAt + 1);
    await drainDue(stub);

    expect((await d1Audit(id)).map((r) => r.action)).toEqual([
      "session.created",
      "session.message_added",
      "session.expired",
    ]);
    const summary = await (await shardOf("alpha"))
      .prepare("SELECT * FROM session_summaries WHERE tenant = 'alpha' AND session_id = ?1")
      .bind(id)
      .first<Record<string, unknown>>();
    expect(summary).toMatchObject({
      current_agent: "support",
      history_length: 1,
      handoff_count: 0,
      expired_at: new Date(expiresAt + 1).toISOString(),
    });
    const storage = await runInDurableObject(stub, async (_instance, state) => ({
      tables: state.storage.sql
        .exec(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite%'",
        )
        .toArray(),
      alarm: await state.storage.getAlarm(),
    }));
    expect(storage).toEqual({ tables: [], alarm: null });

    const later = await call("GET", `/v1/sessions/${id}`);
    expect(later.status).toBe(410);
    expect(later.json.error).toMatchObject({
      code: "SESSION_EXPIRED",
      details: { session_id: id, expired_at: new Date(expiresAt + 1).toISOString() },
    });
    expect((await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "back?" })).status).toBe(410);
  });

  it("an activity before the deadline pushes the expiry; the timer then does nothing early", async () => {
    const { id, stub, rpc } = sessionStub();
    await setClock(stub, FUTURE);
    await rpc.create("alpha", id, { ...args, ttl_s: 60 });
    await setClock(stub, FUTURE + 50_000);
    await rpc.addMessage({ role: "user", content: "still here" });
    await setClock(stub, FUTURE + 61_000);
    await runDurableObjectAlarm(stub);
    const view = await rpc.get();
    expect(view.ok && view.value.expires_at).toBe(new Date(FUTURE + 110_000).toISOString());
  });

  it("while D1 is down an expired session answers 410 itself and keeps its storage until the summary is written", async () => {
    const { id, stub, rpc } = sessionStub();
    await setClock(stub, FUTURE);
    await rpc.create("alpha", id, { ...args, ttl_s: 60 });
    await runDurableObjectAlarm(stub);
    await auditTableDown(true);
    try {
      await setClock(stub, FUTURE + 60_000);
      await runDurableObjectAlarm(stub);
      const view = await rpc.get();
      expect(view.ok).toBe(false);
      expect(!view.ok && view.error).toMatchObject({
        code: "SESSION_EXPIRED",
        details: { expired_at: new Date(FUTURE + 60_000).toISOString() },
      });
      const { timers } = await timersOf(stub);
      expect(timers.find((t) => t.kind === "session.expire")).toMatchObject({
        attempts: 1,
        due_at: FUTURE + 60_000 + FLUSH_BACKOFF_MS[0],
      });
    } finally {
      await auditTableDown(false);
    }
    await setClock(stub, FUTURE + 62_000);
    await drainDue(stub);
    expect((await d1Audit(id)).map((r) => r.action)).toEqual(["session.created", "session.expired"]);
    const view = await rpc.get();
    expect(!view.ok && view.error.code).toBe("SESSION_NOT_FOUND");
  });
});

describe("SessionDO eviction", () => {
  it("keeps session, history, state, agent status and pending audit across eviction", async () => {
    const { id, stub, rpc } = sessionStub();
    await setClock(stub, FUTURE);
    await rpc.create("alpha", id, { ...args, input: "hello" });
    await rpc.patchState({ set: { plan: "pro" } });
    await rpc.setAgentStatus("support", "busy");
    const before = await rpc.get();
    await evictDurableObject(stub);
    const after = await rpc.get();
    expect(after).toEqual(before);
    expect(await pending(rpc)).toBe(4);
    // Eviction reset the pinned clock; pin it again so the flush (due at FUTURE) is due.
    await setClock(stub, FUTURE);
    await flushOutbox(stub);
    expect(await d1Audit(id)).toHaveLength(4);
  });

  it("a get of an unknown id creates no storage", async () => {
    const { stub, rpc } = sessionStub();
    const result = await rpc.get();
    expect(!result.ok && result.error.code).toBe("SESSION_NOT_FOUND");
    const tables = await runInDurableObject(stub, (_instance, state) =>
      state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table'").toArray(),
    );
    expect(tables).toEqual([]);
  });
});
