import { beforeAll, describe, expect, it } from "vitest";
import { encodeCursor } from "../../src/api/cursor";
import {
  advanceClock,
  agentLoadOf,
  agentStub,
  d1Audit,
  drainDue,
  flushOutbox,
  sessionStub,
  setClock,
} from "../durable-objects/helpers";
import { shardOf } from "../shards";
import { expectForgedCursorsRefused } from "./forged-cursors";
import { handoff, loadAgents, newSession } from "./handoff-fixtures";
import { call } from "./helpers";

beforeAll(async () => {
  await loadAgents();
  await call("PUT", "/v1/agents/desk", { name: "desk", handoffs: ["clerk"] });
  await call("PUT", "/v1/agents/clerk", { name: "clerk" });
});

async function actions(session: string, handoffId?: string): Promise<string[]> {
  const page = await call("GET", `/v1/sessions/${session}/audit?limit=500`);
  return page.json.items
    .filter((r: { handoff_id: string | null }) => handoffId === undefined || r.handoff_id === handoffId)
    .map((r: { action: string }) => r.action);
}

/** The lease a session holds at an agent, if any. */
async function leaseOf(agent: string, session: string): Promise<{ state: string } | undefined> {
  return (await agentLoadOf("alpha", agent)).leases.find((l) => l.session_id === session);
}

async function busyGraceful(extra: Record<string, unknown> = {}) {
  const session = await newSession();
  await call("POST", `/v1/sessions/${session}/agent-status`, { agent: "triage", status: "busy" });
  const res = await handoff({
    session_id: session,
    source_agent: "triage",
    target_agent: "billing",
    policy: "graceful",
    timeout_s: 60,
    ...extra,
  });
  expect(res.status).toBe(202);
  return { session, res, stub: sessionStub("alpha", session).stub };
}

describe("graceful timeouts (the deadline timer on the session's alarm)", () => {
  it("times out and fails: pending → timed_out → failed, lock released, no switch", async () => {
    const { session, res, stub } = await busyGraceful();
    await setClock(stub, Date.parse(res.json.deadline_at) + 1);
    await drainDue(stub);
    const record = (await call("GET", `/v1/handoffs/${res.json.id}`)).json;
    expect(record.status).toBe("failed");
    expect(record.transitions.map((t: { to: string }) => t.to)).toEqual([
      "initiated",
      "validating",
      "pending",
      "timed_out",
      "failed",
    ]);
    expect((await call("GET", `/v1/sessions/${session}`)).json).toMatchObject({
      current_agent: "triage",
      in_flight_handoff: null,
    });
    expect(await actions(session, res.json.id)).toEqual([
      "handoff.initiated",
      "handoff.validated",
      "handoff.pending",
      "handoff.timed_out",
      "handoff.failed",
    ]);
    expect((await call("GET", `/v1/sessions/${session}/inbox`)).json.items).toEqual([]);
    // A late idle report finds nothing waiting.
    const idle = await call("POST", `/v1/sessions/${session}/agent-status`, { agent: "triage", status: "idle" });
    expect(idle.json.current_agent).toBe("triage");
  });

  it("times out and escalates: an escalation in the session's inbox", async () => {
    const { session, res, stub } = await busyGraceful({ on_timeout: "escalate", summary: "angry customer" });
    await setClock(stub, Date.parse(res.json.deadline_at) + 1);
    await drainDue(stub);
    expect((await call("GET", `/v1/handoffs/${res.json.id}`)).json.status).toBe("escalated");
    const inbox = (await call("GET", `/v1/sessions/${session}/inbox`)).json.items;
    expect(inbox).toEqual([
      expect.objectContaining({
        kind: "handoff_escalation",
        handoff_id: res.json.id,
        source_agent: "triage",
        target_agent: "billing",
        reason: "the customer needs a specialist",
      }),
    ]);
    expect(inbox[0].details).toMatchObject({ timeout_s: 60, summary: "angry customer" });
    expect(await actions(session, res.json.id)).toEqual([
      "handoff.initiated",
      "handoff.validated",
      "handoff.pending",
      "handoff.timed_out",
      "handoff.escalated",
      "inbox.item_created",
    ]);
  });

  it("pages the inbox by cursor, oldest escalation first", async () => {
    const { session, res, stub } = await busyGraceful({ on_timeout: "escalate" });
    await setClock(stub, Date.parse(res.json.deadline_at) + 1);
    await drainDue(stub);
    const second = await handoff({
      session_id: session,
      source_agent: "triage",
      target_agent: "technical",
      policy: "graceful",
      timeout_s: 60,
      on_timeout: "escalate",
    });
    expect(second.status).toBe(202);
    await setClock(stub, Date.parse(second.json.deadline_at) + 1);
    await drainDue(stub);

    const first = await call("GET", `/v1/sessions/${session}/inbox?limit=1`);
    expect(first.json.items.map((i: { handoff_id: string }) => i.handoff_id)).toEqual([res.json.id]);
    expect(first.json.next_cursor).toEqual(expect.any(String));
    const rest = await call("GET", `/v1/sessions/${session}/inbox?limit=1&cursor=${first.json.next_cursor}`);
    expect(rest.json.items.map((i: { handoff_id: string }) => i.handoff_id)).toEqual([second.json.id]);
    expect(rest.json.next_cursor).toBeNull();
    await expectForgedCursorsRefused(`/v1/sessions/${session}/inbox?limit=1`, first.json.next_cursor);
    // An item id of another session is no position in this one's inbox.
    const other = await newSession("triage");
    const foreign = encodeCursor(atob(first.json.next_cursor).replace(session, other));
    expect((await call("GET", `/v1/sessions/${other}/inbox?cursor=${first.json.next_cursor}`)).json.error.code).toBe(
      "INVALID_CURSOR",
    );
    expect((await call("GET", `/v1/sessions/${session}/inbox?cursor=${foreign}`)).json.error.code).toBe(
      "INVALID_CURSOR",
    );
    expect((await call("GET", `/v1/sessions/${session}/inbox`)).json.items).toEqual([
      ...first.json.items,
      ...rest.json.items,
    ]);
    expect((await call("GET", `/v1/sessions/${session}/inbox?limit=0`)).json.error.code).toBe("VALIDATION_FAILED");
  });

  it("a deadline that has not come yet does nothing", async () => {
    const { res, stub } = await busyGraceful();
    await setClock(stub, Date.parse(res.json.deadline_at) - 1_000);
    await drainDue(stub);
    expect((await call("GET", `/v1/handoffs/${res.json.id}`)).json.status).toBe("pending");
  });
});

describe("idempotency", () => {
  it("the same key returns the first result and hands off once", async () => {
    const session = await newSession();
    const body = { session_id: session, source_agent: "triage", target_agent: "billing" };
    const first = await handoff(body, { "Idempotency-Key": "k-1" });
    const second = await handoff(body, { "Idempotency-Key": "k-1" });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.json).toEqual(first.json);
    expect((await actions(session)).filter((a) => a === "handoff.initiated")).toHaveLength(1);
    expect((await call("GET", `/v1/sessions/${session}`)).json.handoff_stack).toEqual(["triage", "billing"]);
  });

  it("the same key with another body is 409 IDEMPOTENCY_KEY_REUSED", async () => {
    const session = await newSession();
    await handoff(
      { session_id: session, source_agent: "triage", target_agent: "billing" },
      { "Idempotency-Key": "k-2" },
    );
    const other = await handoff(
      { session_id: session, source_agent: "billing", mode: "return" },
      { "Idempotency-Key": "k-2" },
    );
    expect(other.status).toBe(409);
    expect(other.json.error.code).toBe("IDEMPOTENCY_KEY_REUSED");
  });

  it("replays a failure with its status and body, and a 202 as a 202", async () => {
    const session = await newSession();
    const bad = { session_id: session, source_agent: "triage", target_agent: "ghost" };
    const first = await handoff(bad, { "Idempotency-Key": "k-3" });
    const again = await handoff(bad, { "Idempotency-Key": "k-3" });
    expect([first.status, again.status]).toEqual([404, 404]);
    expect(again.json).toEqual(first.json);

    await call("POST", `/v1/sessions/${session}/agent-status`, { agent: "triage", status: "busy" });
    const graceful = { session_id: session, source_agent: "triage", target_agent: "billing", policy: "graceful" };
    const pending = await handoff(graceful, { "Idempotency-Key": "k-4" });
    await call("POST", `/v1/sessions/${session}/agent-status`, { agent: "triage", status: "idle" });
    const replay = await handoff(graceful, { "Idempotency-Key": "k-4" });
    expect([pending.status, replay.status]).toEqual([202, 202]);
    expect(replay.json).toEqual(pending.json);
    expect((await call("GET", `/v1/handoffs/${pending.json.id}`)).json.status).toBe("completed");
  });

  it("concurrent requests with one key: one handoff, every caller gets its result", async () => {
    const session = await newSession();
    const body = { session_id: session, source_agent: "triage", target_agent: "technical" };
    const results = await Promise.all(Array.from({ length: 6 }, () => handoff(body, { "Idempotency-Key": "k-5" })));
    expect(results.map((r) => r.status)).toEqual(Array(6).fill(200));
    expect(new Set(results.map((r) => r.json.id)).size).toBe(1);
    expect((await actions(session)).filter((a) => a === "handoff.completed")).toHaveLength(1);
  });
});

describe("concurrency", () => {
  it("10 parallel handoffs on one session: exactly one wins, the others get 409", async () => {
    const session = await newSession();
    const targets = ["billing", "technical"];
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        handoff({ session_id: session, source_agent: "triage", target_agent: targets[i % 2] }),
      ),
    );
    const winners = results.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    for (const loser of results.filter((r) => r.status !== 200)) {
      expect(loser.status).toBe(409);
      expect(["HANDOFF_IN_PROGRESS", "NOT_CURRENT_AGENT"]).toContain(loser.json.error.code);
    }
    const winner = winners[0]!.json.target as string;
    const view = (await call("GET", `/v1/sessions/${session}`)).json;
    expect(view).toMatchObject({ current_agent: winner, handoff_stack: ["triage", winner], in_flight_handoff: null });
    expect((await actions(session)).filter((a) => a === "handoff.completed")).toHaveLength(1);
    expect(await leaseOf(winner, session)).toMatchObject({ state: "held" });
    expect(await leaseOf(targets.find((t) => t !== winner)!, session)).toBeUndefined();
    expect(await leaseOf("triage", session)).toBeUndefined();
  });
});

describe("leases follow the current agent", () => {
  it("created: the first agent holds one; a transfer moves it, a return moves it back", async () => {
    const session = await newSession();
    expect(await leaseOf("triage", session)).toMatchObject({ state: "held" });
    await handoff({ session_id: session, source_agent: "triage", target_agent: "billing" });
    expect(await leaseOf("billing", session)).toMatchObject({ state: "held" });
    expect(await leaseOf("triage", session)).toBeUndefined();
    await handoff({ session_id: session, source_agent: "billing", mode: "return" });
    expect(await leaseOf("triage", session)).toMatchObject({ state: "held" });
    expect(await leaseOf("billing", session)).toBeUndefined();
  });

  it("delete frees the lease and cancels a pending handoff", async () => {
    const { session, res, stub } = await busyGraceful();
    expect((await call("DELETE", `/v1/sessions/${session}`)).status).toBe(204);
    expect(await leaseOf("triage", session)).toBeUndefined();
    await drainDue(stub);
    const trail = await d1Audit(session);
    expect(trail.map((r) => r.action)).toContain("handoff.cancelled");
    const index = await (await shardOf("alpha"))
      .prepare("SELECT status FROM handoffs WHERE id = ?1")
      .bind(res.json.id)
      .first<{ status: string }>();
    expect(index?.status).toBe("cancelled");
  });

  it("expiry frees the lease", async () => {
    const session = await newSession("triage", { ttl_s: 60 });
    const { stub } = sessionStub("alpha", session);
    const view = (await call("GET", `/v1/sessions/${session}`)).json;
    await setClock(stub, Date.parse(view.expires_at) + 1);
    await drainDue(stub);
    expect((await call("GET", `/v1/sessions/${session}`)).status).toBe(410);
    expect(await leaseOf("triage", session)).toBeUndefined();
  });
});

describe("GET /v1/agents/:name/handoffs (the D1 index)", () => {
  it("lists an agent's handoffs newest first with cursor paging, once the outbox has flushed", async () => {
    const session = await newSession("desk");
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(
        (await handoff({ session_id: session, source_agent: "desk", target_agent: "clerk", reason: `round ${i}` })).json
          .id,
      );
      ids.push((await handoff({ session_id: session, source_agent: "clerk", mode: "return" })).json.id);
    }
    ids.push(
      (await handoff({ session_id: session, source_agent: "clerk", mode: "return" })).json.error.details.handoff_id,
    );
    await flushOutbox(sessionStub("alpha", session).stub);

    const first = await call("GET", "/v1/agents/clerk/handoffs?limit=4");
    expect(first.status).toBe(200);
    const second = await call("GET", `/v1/agents/clerk/handoffs?limit=4&cursor=${first.json.next_cursor}`);
    expect(second.json.next_cursor).toBeNull();
    await expectForgedCursorsRefused("/v1/agents/clerk/handoffs?limit=4", first.json.next_cursor);
    const rows = [...first.json.items, ...second.json.items];
    expect(rows.map((r: { id: string }) => r.id)).toEqual([...ids].reverse());
    expect(rows[0]).toMatchObject({
      session_id: session,
      source_agent: "clerk",
      target_agent: null,
      status: "failed",
      mode: "return",
    });
    expect(rows[1]).toMatchObject({
      source_agent: "clerk",
      target_agent: "desk",
      status: "completed",
      mode: "return",
      policy: "immediate",
    });
    expect(rows[6]).toMatchObject({
      source_agent: "desk",
      target_agent: "clerk",
      status: "completed",
      reason: "round 0",
    });
    expect(rows[6].completed_at).not.toBeNull();
    expect((await call("GET", "/v1/agents/desk/handoffs")).json.items).toHaveLength(6);
    expect((await call("GET", "/v1/agents/Bad Name/handoffs")).status).toBe(400);
  });

  it("loses nothing while D1's index table is down: audit and index arrive together when it is back", async () => {
    const session = await newSession("desk");
    const { stub } = sessionStub("alpha", session);
    await flushOutbox(stub);
    await (await shardOf("alpha")).exec("ALTER TABLE handoffs RENAME TO handoffs_offline");
    let id: string;
    try {
      id = (await handoff({ session_id: session, source_agent: "desk", target_agent: "clerk" })).json.id;
      await flushOutbox(stub);
      expect((await d1Audit(session)).map((r) => r.action)).toEqual(["session.created"]);
    } finally {
      await (await shardOf("alpha")).exec("ALTER TABLE handoffs_offline RENAME TO handoffs");
    }
    await advanceClock(stub, 120_000);
    await drainDue(stub);
    const index = await (await shardOf("alpha"))
      .prepare("SELECT status, source_agent, target_agent FROM handoffs WHERE id = ?1")
      .bind(id)
      .first();
    expect(index).toEqual({ status: "completed", source_agent: "desk", target_agent: "clerk" });
    expect((await d1Audit(session)).filter((r) => r.action.startsWith("handoff."))).toHaveLength(4);
  });
});

describe("capacity is opt-in", () => {
  // 120 sessions made one after another: the default 5 s is a wall-clock budget the machine's load decides.
  it("an agent without a limit takes any number of sessions and handoffs, and its AgentDO is never called", async () => {
    await call("PUT", "/v1/agents/open-desk", { name: "open-desk", handoffs: ["open-specialist"] });
    await call("PUT", "/v1/agents/open-specialist", { name: "open-specialist" });
    const sessions: string[] = [];
    for (let i = 0; i < 120; i++) sessions.push(await newSession("open-desk"));
    expect(new Set(sessions).size).toBe(120);
    const moved = await handoff({
      session_id: sessions[0],
      source_agent: "open-desk",
      target_agent: "open-specialist",
    });
    expect(moved.json.status).toBe("completed");
    const back = await handoff({ session_id: sessions[0], source_agent: "open-specialist", mode: "return" });
    expect(back.json.status).toBe("completed");
    // No acquire ever reached these objects: they report the load of an agent never used.
    for (const agent of ["open-desk", "open-specialist"]) {
      const load = await agentStub("alpha", agent).rpc.load();
      expect(load.ok && load.value).toEqual({
        status: "active",
        max_concurrent_sessions: null,
        active_leases: 0,
        leases: [],
      });
    }
  }, 30_000);

  it("an agent with a limit keeps the lease semantics: the session past the limit is refused", async () => {
    await call("PUT", "/v1/agents/two-seats", { name: "two-seats", max_concurrent_sessions: 2 });
    await newSession("two-seats");
    await newSession("two-seats");
    const third = await call("POST", "/v1/sessions", { agent: "two-seats" });
    expect(third.status).toBe(422);
    expect(third.json.error).toMatchObject({
      code: "AGENT_UNAVAILABLE",
      details: { reason: "at_capacity", capacity: 2 },
    });
    const load = await agentStub("alpha", "two-seats").rpc.load();
    expect(load.ok && load.value.active_leases).toBe(2);
  });
});
