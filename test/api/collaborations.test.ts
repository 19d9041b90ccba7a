import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { shardOf } from "../shards";
import type { CollaborationDO } from "../worker";
import { call } from "./helpers";

/**
 * Agents talking to each other (docs/collaboration.md): collaborations with their message log and
 * phases, queries that block their sender until answered, timed out or cancelled, ttl
 * expiry by alarm, capability broadcasts, and deadlocks across AgentDOs found by probes
 * and broken at the earliest waiter. Real Durable Objects, alarms and D1.
 */

const AGENTS = [
  "a1",
  "a2",
  "a3",
  "a4",
  "a5",
  "b1",
  "b2",
  "c1",
  "c2",
  "c3",
  "h1",
  "h2",
  "h3",
  "h4",
  "x1",
  "x2",
  "x3",
  "x4",
  "x5",
];

beforeAll(async () => {
  for (const name of AGENTS) await call("PUT", `/v1/agents/${name}`, { name, description: name });
  await call("PUT", "/v1/agents/legal", {
    name: "legal",
    description: "Legal",
    capabilities: [{ name: "contracts", proficiency: 0.9 }],
  });
  await call("PUT", "/v1/agents/clerk", {
    name: "clerk",
    description: "Clerk",
    capabilities: [
      { name: "contracts", proficiency: 0.4 },
      { name: "filing", proficiency: 1 },
    ],
  });
});

async function collaboration(initiator: string, participants: string[]): Promise<string> {
  const res = await call("POST", "/v1/collaborations", { initiator, participants, context: { topic: "test" } });
  if (res.status !== 201) throw new Error(JSON.stringify(res.json));
  return res.json.id;
}

const send = (id: string, message: Record<string, unknown>) =>
  call("POST", `/v1/collaborations/${id}/messages`, message);
const blocking = async (agent: string) => (await call("GET", `/v1/agents/${agent}/blocking`)).json;
const messageOf = async (id: string, messageId: string) =>
  (await call("GET", `/v1/collaborations/${id}`)).json.messages.find((m: { id: string }) => m.id === messageId);

function stubOf(id: string): DurableObjectStub<CollaborationDO> {
  return env.COLLABORATIONS.get(env.COLLABORATIONS.idFromName(`alpha:${id}`)) as DurableObjectStub<CollaborationDO>;
}

/** Moves the collaboration's clock and runs its alarm until nothing is due. */
async function advance(id: string, ms: number): Promise<void> {
  const stub = stubOf(id);
  await runInDurableObject(stub, (instance: CollaborationDO) => instance.clock.advance(ms));
  for (let i = 0; i < 10; i++) {
    const due = await runInDurableObject(stub, (instance: CollaborationDO, state) => {
      const row = state.storage.sql.exec("SELECT MIN(due_at) AS due FROM timers").one() as { due: number | null };
      return row.due !== null && row.due <= instance.clock.now();
    });
    if (!due) return;
    await runDurableObjectAlarm(stub);
  }
}

describe("collaborations", () => {
  it("creates one with its participants (initiator first); unknown agents are 404; reads back with its log", async () => {
    const res = await call("POST", "/v1/collaborations", {
      initiator: "a1",
      participants: ["a2", "a1", "a3"],
      context: { goal: "plan" },
    });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({
      phase: "discovery",
      initiator: "a1",
      participants: ["a1", "a2", "a3"],
      context: { goal: "plan" },
      messages: [],
    });
    expect(
      (await call("POST", "/v1/collaborations", { initiator: "a1", participants: ["ghost"] })).json.error.code,
    ).toBe("AGENT_NOT_FOUND");
    expect((await call("POST", "/v1/collaborations", { initiator: "a1", participants: [] })).status).toBe(400);
    expect((await call("GET", "/v1/collaborations/col_00000000000000000000000000")).status).toBe(404);
    expect((await call("GET", "/v1/collaborations/nope")).json.error.code).toBe("COLLABORATION_NOT_FOUND");
  });

  it("takes every message type, in order, with priority and correlation; refuses non-participants", async () => {
    const id = await collaboration("a1", ["a2", "a3"]);
    const first = (
      await send(id, { type: "request", from: "a1", to: "a2", subject: "plan", payload: { step: 1 }, priority: "high" })
    ).json.message;
    const messages = [
      { type: "response", from: "a2", to: "a1", correlation_id: first.id },
      { type: "broadcast", from: "a1", payload: { note: "all hands" } },
      { type: "notify", from: "a3", to: "a1", priority: "low" },
      { type: "escalate", from: "a2", payload: { why: "stuck" } },
      { type: "negotiate", from: "a1", to: "a2", payload: { price: 10 } },
      { type: "reject", from: "a2", correlation_id: first.id },
      { type: "acknowledge", from: "a3", correlation_id: first.id },
      { type: "query", from: "a3", to: "a2", timeout_s: 60 },
      { type: "cancel", from: "a1" },
    ];
    for (const m of messages) expect((await send(id, m)).status, m.type).toBe(201);
    const log = (await call("GET", `/v1/collaborations/${id}`)).json.messages;
    expect(log.map((m: { type: string }) => m.type)).toEqual(["request", ...messages.map((m) => m.type)]);
    expect(log.map((m: { seq: number }) => m.seq)).toEqual(log.map((_: unknown, i: number) => i + 1));
    expect(log[0]).toMatchObject({ priority: "high", subject: "plan", payload: { step: 1 }, status: "sent" });
    const outsider = await send(id, { type: "notify", from: "b1", to: "a1" });
    expect(outsider.status).toBe(400);
    const orphan = await send(id, { type: "response", from: "a2", to: "a1", correlation_id: "cmsg_nope" });
    expect(orphan.status).toBe(400);
  });

  it("phases: negotiate → counter → accept → agreement (terms kept) → request → execution → complete; refused transitions change nothing", async () => {
    const id = await collaboration("a1", ["a2"]);
    expect((await call("POST", `/v1/collaborations/${id}/complete`, { outcome: "succeeded" })).status).toBe(409);
    const p1 = (await send(id, { type: "negotiate", from: "a1", to: "a2", payload: { price: 10 } })).json.message;
    const p2 = (await send(id, { type: "negotiate", from: "a2", to: "a1", payload: { price: 12 } })).json.message;
    await send(id, { type: "acknowledge", from: "a1", correlation_id: p1.id });
    expect((await call("GET", `/v1/collaborations/${id}`)).json.phase).toBe("negotiation");
    await send(id, { type: "acknowledge", from: "a1", correlation_id: p2.id });
    expect((await call("GET", `/v1/collaborations/${id}`)).json).toMatchObject({
      phase: "agreement",
      proposal_id: p2.id,
      terms: { price: 12 },
    });
    await send(id, { type: "request", from: "a1", to: "a2", subject: "do it" });
    expect((await call("GET", `/v1/collaborations/${id}`)).json.phase).toBe("execution");
    const refused = await send(id, { type: "negotiate", from: "a1", to: "a2", payload: { price: 1 } });
    expect(refused.status).toBe(409);
    expect(refused.json.error).toMatchObject({
      code: "INVALID_TRANSITION",
      details: { phase: "execution", event: "propose" },
    });
    const before = (await call("GET", `/v1/collaborations/${id}`)).json.messages.length;
    const done = await call("POST", `/v1/collaborations/${id}/complete`, {
      outcome: "succeeded",
      result: { booked: true },
    });
    expect(done.json).toMatchObject({ phase: "completion", outcome: "succeeded", result: { booked: true } });
    expect((await send(id, { type: "notify", from: "a1", to: "a2" })).status).toBe(409);
    expect((await call("GET", `/v1/collaborations/${id}`)).json.messages.length).toBe(before);
  });

  it("a final reject ends the negotiation", async () => {
    const id = await collaboration("a1", ["a2"]);
    const p = (await send(id, { type: "negotiate", from: "a1", to: "a2", payload: { price: 99 } })).json.message;
    await send(id, { type: "reject", from: "a2", correlation_id: p.id, payload: { final: true } });
    expect((await call("GET", `/v1/collaborations/${id}`)).json).toMatchObject({
      phase: "completion",
      outcome: "rejected",
    });
  });

  it("a capability broadcast is answered by the capability matcher (min_score, exclude)", async () => {
    const id = await collaboration("a1", ["legal", "clerk", "a2"]);
    const res = await send(id, { type: "broadcast", from: "a1", payload: { capabilities: ["contracts"] } });
    expect(res.json.matches.map((m: { agent: string; score: number }) => [m.agent, m.score])).toEqual([
      ["legal", 0.9],
      ["clerk", 0.4],
    ]);
    const filtered = await send(id, {
      type: "broadcast",
      from: "a1",
      payload: { capabilities: ["contracts"], min_score: 0.5, exclude: ["legal"] },
    });
    expect(filtered.json.matches).toEqual([]);
  });
});

describe("queries", () => {
  it("answered: the sender is blocked on the receiver until the response", async () => {
    const id = await collaboration("c1", ["c2"]);
    const query = (await send(id, { type: "query", from: "c1", to: "c2", subject: "price?", timeout_s: 60 })).json
      .message;
    expect(await blocking("c1")).toMatchObject({
      status: "internal",
      waiting_for: "c2",
      reason: "price?",
      message_id: query.id,
      started_at: expect.any(String),
    });
    expect(await blocking("c2")).toMatchObject({ status: "none" });
    const response = (
      await send(id, { type: "response", from: "c2", to: "c1", correlation_id: query.id, payload: { price: 3 } })
    ).json.message;
    expect(await blocking("c1")).toMatchObject({ status: "none", waiting_for: null });
    expect(await messageOf(id, query.id)).toMatchObject({ status: "answered", answered_by: response.id, error: null });
  });

  it("timed out by alarm: QUERY_TIMEOUT, the sender unblocked, recorded", async () => {
    const id = await collaboration("c1", ["c3"]);
    const query = (await send(id, { type: "query", from: "c1", to: "c3", timeout_s: 5 })).json.message;
    await advance(id, 4_000);
    expect(await blocking("c1")).toMatchObject({ status: "internal", message_id: query.id });
    await advance(id, 2_000);
    expect(await messageOf(id, query.id)).toMatchObject({ status: "timed_out", error: "QUERY_TIMEOUT" });
    expect(await blocking("c1")).toMatchObject({ status: "none" });
    const { results } = await (await shardOf("alpha"))
      .prepare("SELECT action FROM audit_log WHERE tenant = 'alpha' AND json_extract(details, '$.message_id') = ?1")
      .bind(query.id)
      .all<{ action: string }>();
    expect(results.map((r) => r.action)).toEqual(["collaboration.message_sent", "collaboration.query_timed_out"]);
  });

  it("cancelled: a cancel naming the query ends the wait", async () => {
    const id = await collaboration("c2", ["c3"]);
    const query = (await send(id, { type: "query", from: "c2", to: "c3" })).json.message;
    await send(id, { type: "cancel", from: "c2", correlation_id: query.id });
    expect(await messageOf(id, query.id)).toMatchObject({ status: "cancelled", error: "cancelled" });
    expect(await blocking("c2")).toMatchObject({ status: "none" });
    // A response after the cancel answers nothing.
    await send(id, { type: "response", from: "c3", to: "c2", correlation_id: query.id });
    expect((await messageOf(id, query.id)).status).toBe("cancelled");
  });

  it("a message's ttl runs out unanswered: dropped by alarm and recorded", async () => {
    const id = await collaboration("b1", ["b2"]);
    const notice = (await send(id, { type: "notify", from: "b1", to: "b2", ttl_s: 10 })).json.message;
    const lasting = (await send(id, { type: "notify", from: "b1", to: "b2" })).json.message;
    expect(notice.expires_at).toEqual(expect.any(String));
    await advance(id, 11_000);
    expect((await messageOf(id, notice.id)).status).toBe("expired");
    expect((await messageOf(id, lasting.id)).status).toBe("sent");
    const { results } = await (await shardOf("alpha"))
      .prepare(
        "SELECT action FROM audit_log WHERE action = 'collaboration.message_expired' AND json_extract(details, '$.message_id') = ?1",
      )
      .bind(notice.id)
      .all();
    expect(results).toHaveLength(1);
  });

  it("nothing is lost when the collaboration's object is evicted mid-collaboration; its timers still fire", async () => {
    const id = await collaboration("b1", ["b2"]);
    await send(id, { type: "negotiate", from: "b1", to: "b2", payload: { slot: "9am" } });
    const query = (await send(id, { type: "query", from: "b2", to: "b1", timeout_s: 5 })).json.message;
    await evictDurableObject(stubOf(id));
    const after = (await call("GET", `/v1/collaborations/${id}`)).json;
    expect(after).toMatchObject({
      phase: "negotiation",
      messages: [{ type: "negotiate" }, { type: "query", status: "sent" }],
    });
    await advance(id, 6_000);
    expect((await messageOf(id, query.id)).error).toBe("QUERY_TIMEOUT");
  });
});

describe("escalations to a person", () => {
  it("blocking (the default): the sender is blocked_user until a person answers", async () => {
    const id = await collaboration("a4", ["a5"]);
    const escalation = (
      await send(id, { type: "escalate", from: "a4", subject: "refund over the limit", payload: { amount: 900 } })
    ).json.message;
    expect(await blocking("a4")).toMatchObject({
      status: "user",
      waiting_for: "user",
      reason: "refund over the limit",
      message_id: escalation.id,
    });
    const resolved = await call("POST", `/v1/collaborations/${id}/messages/${escalation.id}/resolve`, {
      reply: "Approved.",
      by: "ops@example.com",
    });
    expect(resolved.json).toMatchObject({ status: "answered", reply: "Approved.", resolved_by: "ops@example.com" });
    expect(await blocking("a4")).toMatchObject({ status: "none" });
    const again = await call("POST", `/v1/collaborations/${id}/messages/${escalation.id}/resolve`, { reply: "twice" });
    expect(again.status).toBe(409);
    const notOne = await call("POST", `/v1/collaborations/${id}/messages/cmsg_nope/resolve`, { reply: "x" });
    expect(notOne.status).toBe(404);
  });

  it("is in the tenant's inbox too: listed, read and answered through /v1/inbox like a session's item", async () => {
    const id = await collaboration("b2", ["b1"]);
    const escalation = (await send(id, { type: "escalate", from: "b2", subject: "needs sign-off" })).json.message;
    await advance(id, 0);
    const listed = (await call("GET", `/v1/inbox?kind=escalation&session_id=${id}`)).json.items;
    expect(listed).toEqual([
      expect.objectContaining({
        kind: "escalation",
        status: "open",
        session_id: id,
        agent: "b2",
        reason: "needs sign-off",
      }),
    ]);
    const itemId = listed[0].id;
    expect((await call("GET", `/v1/inbox/${itemId}`)).json).toMatchObject({
      id: itemId,
      status: "open",
      details: { collaboration_id: id, message_id: escalation.id },
    });
    const wrong = await call("POST", `/v1/inbox/${itemId}/resolve`, { decision: "approve" });
    expect(wrong.json.error.code).toBe("INBOX_ANSWER_MISMATCH");
    const resolved = await call("POST", `/v1/inbox/${itemId}/resolve`, { reply: "Signed.", by: "cfo@example.com" });
    expect(resolved.json).toMatchObject({
      item: { status: "resolved", reply: "Signed.", resolved_by: "cfo@example.com" },
      run: null,
    });
    expect((await blocking("b2")).status).toBe("none");
    await advance(id, 0);
    expect((await call("GET", `/v1/inbox?kind=escalation&session_id=${id}`)).json.items[0]).toMatchObject({
      status: "resolved",
      resolved_by: "cfo@example.com",
    });
    expect((await call("GET", `/v1/inbox/inb_${"0".repeat(26)}_${id}`)).status).toBe(404);
  });

  it("non-blocking: the sender carries on; the escalation waits for its answer or times out", async () => {
    const id = await collaboration("a4", ["a5"]);
    const escalation = (await send(id, { type: "escalate", from: "a4", payload: { blocking: false }, timeout_s: 60 }))
      .json.message;
    expect(await blocking("a4")).toMatchObject({ status: "none" });
    await advance(id, 61_000);
    expect(await messageOf(id, escalation.id)).toMatchObject({ status: "timed_out", error: "HUMAN_TIMEOUT" });
  });

  it("a blocking escalation nobody answers times out and frees its sender", async () => {
    const id = await collaboration("a5", ["a4"]);
    const escalation = (await send(id, { type: "escalate", from: "a5", timeout_s: 30 })).json.message;
    expect((await blocking("a5")).status).toBe("user");
    await advance(id, 31_000);
    expect((await messageOf(id, escalation.id)).error).toBe("HUMAN_TIMEOUT");
    expect((await blocking("a5")).status).toBe("none");
  });
});

describe("deadlocks across agents", () => {
  /** Queries around a ring of agents (each waits for the next), one at a time; returns their ids in order. */
  async function ring(id: string, agents: string[], close: boolean): Promise<string[]> {
    const ids: string[] = [];
    const hops = close ? agents.length : agents.length - 1;
    for (let i = 0; i < hops; i++) {
      const res = await send(id, {
        type: "query",
        from: agents[i],
        to: agents[(i + 1) % agents.length],
        timeout_s: 600,
      });
      ids.push(res.json.message.id);
    }
    return ids;
  }

  for (const size of [2, 3, 5]) {
    it(`a ${size}-agent cycle is broken at its earliest waiter (DEADLOCK_RESOLVED), the rest still waiting`, async () => {
      const agents = ["x1", "x2", "x3", "x4", "x5"].slice(0, size);
      const id = await collaboration(agents[0]!, agents.slice(1));
      const ids = await ring(id, agents, true);
      const first = await messageOf(id, ids[0]!);
      expect(first).toMatchObject({ status: "timed_out", error: "DEADLOCK_RESOLVED" });
      expect(await blocking(agents[0]!)).toMatchObject({ status: "none" });
      for (const [i, messageId] of ids.slice(1).entries()) {
        expect((await messageOf(id, messageId)).status).toBe("sent");
        expect(await blocking(agents[i + 1]!)).toMatchObject({ status: "internal", message_id: messageId });
      }
      const { results } = await (await shardOf("alpha"))
        .prepare(
          "SELECT details FROM audit_log WHERE action = 'deadlock.resolved' AND json_extract(details, '$.message_id') = ?1",
        )
        .bind(ids[0])
        .all<{ details: string }>();
      // The record reaches D1 once its outbox flushes (the alarm, run here).
      if (results.length === 0) await advance(id, 0);
      const recorded = (
        await (
          await shardOf("alpha")
        )
          .prepare(
            "SELECT details FROM audit_log WHERE action = 'deadlock.resolved' AND json_extract(details, '$.message_id') = ?1",
          )
          .bind(ids[0])
          .all<{ details: string }>()
      ).results;
      expect(recorded).toHaveLength(1);
      expect(JSON.parse(recorded[0]!.details).cycle).toHaveLength(size);
      // Unblock the survivors so later tests start clean.
      for (const messageId of ids.slice(1))
        await send(id, { type: "cancel", from: (await messageOf(id, messageId)).from, correlation_id: messageId });
    });
  }

  it("the periodic alarm finds a cycle whose probes were lost when its waits began", async () => {
    // Two queries recorded with their waits written straight into the agents' objects, as if
    // every probe sent when they began had been lost; only the alarm's probes can find the cycle.
    const id = await collaboration("b1", ["b2"]);
    const q1 = (await send(id, { type: "notify", from: "b1", to: "b2" })).json.message;
    const q2 = (await send(id, { type: "notify", from: "b2", to: "b1" })).json.message;
    const agentStub = (name: string) => env.AGENTS.get(env.AGENTS.idFromName(`alpha:${name}`));
    const plant = async (self: string, to: string, messageId: string, since: number) =>
      runInDurableObject(agentStub(self), (_i, state) => {
        state.storage.sql.exec(
          "INSERT INTO waits (message_id, tenant, self, kind, to_agent, reason, collaboration_id, since) VALUES (?, 'alpha', ?, 'internal', ?, 'planted', ?, ?)",
          messageId,
          self,
          to,
          id,
          since,
        );
        state.storage.sql.exec(
          "INSERT INTO timers (id, kind, key, due_at, payload) VALUES ('t_probe', 'deadlock.probe', 'deadlock.probe', 0, 'null')",
        );
      });
    // The planted waits are on notify messages, which the collaboration does not treat as queries:
    // breaking one still ends the wait (and is recorded), which is what the test watches.
    await plant("b1", "b2", q1.id, 1_000);
    await plant("b2", "b1", q2.id, 2_000);
    expect((await blocking("b1")).status).toBe("internal");
    await runDurableObjectAlarm(agentStub("b2"));
    expect(await blocking("b1")).toMatchObject({ status: "none" });
    expect(await blocking("b2")).toMatchObject({ status: "internal", message_id: q2.id });
    await runInDurableObject(agentStub("b2"), (_i, state) => state.storage.sql.exec("DELETE FROM waits"));
  });

  it("a chain with no cycle breaks nothing", async () => {
    const agents = ["h1", "h2", "h3", "h4"];
    const id = await collaboration("h1", agents.slice(1));
    const ids = await ring(id, agents, false);
    for (const messageId of ids) expect((await messageOf(id, messageId)).status).toBe("sent");
    expect((await blocking("h3")).waiting_for).toBe("h4");
    expect(await blocking("h4")).toMatchObject({ status: "none" });
  });
});
