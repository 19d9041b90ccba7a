import { runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { advanceClock, drainDue, flushOutbox, sessionStub, timersOf } from "../durable-objects/helpers";
import { answer, fakeOpenAI, httpError } from "../fakes/openai";
import { llmServer } from "../fakes/server";
import { shardOf } from "../shards";
import { call } from "./helpers";
import { agentOf, script } from "./run-fixtures";

/**
 * The model of `agent` answers "done" only when the test releases it: `called` resolves once the
 * run is at its model call, so what the test does meanwhile happens during the run, whatever the load.
 */
function heldModel(agent: string) {
  let release!: () => void;
  let called!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const reached = new Promise<void>((resolve) => {
    called = resolve;
  });
  const fake = fakeOpenAI({
    baseUrl: "https://llm.test/v1",
    respond: async (req) => {
      if (agentOf(req) !== agent) throw new Error(`no reply for ${agentOf(req)}`);
      called();
      await gate;
      return answer("done");
    },
  });
  llmServer.use(fake.handler);
  return { called: reached, release };
}

/**
 * Triggered handoffs end to end (docs/triggers.md): every trigger type at its evaluation point,
 * audited with actor_type trigger, and the rule for points that arrive while the session
 * is busy. Sessions, timers and D1 are real; the model is faked at the fetch boundary.
 */

const AGENTS = [
  {
    name: "desk",
    description: "Front desk",
    capabilities: [{ name: "billing" }],
    handoffs: [
      { to: "boss", when: "conditional", trigger: { type: "condition", expression: "refund > 500" } },
      { to: "ops", when: "auto", trigger: { type: "event", event: "outage", expression: "event.severity >= 3" } },
      { to: "night", when: "auto", trigger: { type: "timeout", timeout_s: 60 } },
      { to: "fallback", when: "auto", trigger: { type: "error", error_types: ["MODEL_ERROR"] } },
      { to: "legal", when: "auto", trigger: { type: "capability" } },
      { to: "manager", when: "auto", trigger: { type: "explicit" } },
    ],
  },
  { name: "boss", description: "Boss" },
  { name: "ops", description: "Ops" },
  { name: "night", description: "Night shift" },
  { name: "fallback", description: "Fallback" },
  { name: "legal", description: "Legal", capabilities: [{ name: "contracts", proficiency: 0.9 }] },
  { name: "manager", description: "Manager" },
];

beforeAll(async () => {
  for (const agent of AGENTS) {
    const res = await call("PUT", `/v1/agents/${agent.name}`, agent);
    if (res.status >= 300) throw new Error(`PUT ${agent.name}: ${JSON.stringify(res.json)}`);
  }
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
});

async function session(): Promise<string> {
  return (await call("POST", "/v1/sessions", { agent: "desk", ttl_s: 3 * 86_400 })).json.id;
}
const current = async (id: string) => (await call("GET", `/v1/sessions/${id}`)).json.current_agent as string;

/** The session's audit trail from its object (read-your-writes). */
async function audit(id: string) {
  return (await call("GET", `/v1/sessions/${id}/audit?limit=200`)).json.items as {
    action: string;
    actor: string;
    actor_type: string;
    details: Record<string, unknown>;
  }[];
}

describe("trigger evaluation points", () => {
  it("condition: a state change that makes the expression true hands off, audited as a trigger", async () => {
    const id = await session();
    const low = await call("PATCH", `/v1/sessions/${id}/state`, { set: { refund: 100 } });
    expect(low.json.current_agent).toBe("desk");
    const high = await call("PATCH", `/v1/sessions/${id}/state`, { set: { refund: 900 } });
    expect(high.json.current_agent).toBe("boss");
    const started = (await audit(id)).find((r) => r.action === "handoff.initiated");
    expect(started).toMatchObject({ actor: "trigger:condition", actor_type: "trigger" });
    const completed = (await audit(id)).find((r) => r.action === "handoff.completed") as unknown as {
      handoff_id: string;
    };
    const record = (await call("GET", `/v1/handoffs/${completed.handoff_id}`)).json;
    expect(record.request.reason).toBe("trigger (condition): refund > 500");
    // The audit reaches D1 with the new actor type.
    await flushOutbox(sessionStub("alpha", id).stub);
    const { results } = await (await shardOf("alpha"))
      .prepare("SELECT actor_type FROM audit_log WHERE session_id = ?1 AND actor = 'trigger:condition'")
      .bind(id)
      .all();
    expect(results.length).toBeGreaterThan(0);
  });

  it("event: POST /events fires the matching event trigger; a non-matching one changes nothing", async () => {
    const id = await session();
    const mild = await call("POST", `/v1/sessions/${id}/events`, { name: "outage", data: { severity: 1 } });
    expect(mild.status).toBe(200);
    expect(mild.json).toEqual({ handoff: null, queued: false });
    const other = await call("POST", `/v1/sessions/${id}/events`, { name: "deploy", data: { severity: 5 } });
    expect(other.json.handoff).toBeNull();
    expect(await current(id)).toBe("desk");
    const severe = await call("POST", `/v1/sessions/${id}/events`, { name: "outage", data: { severity: 4 } });
    expect(severe.json.handoff).toMatchObject({ status: "completed", target: "ops" });
    expect(await current(id)).toBe("ops");
    const bad = await call("POST", `/v1/sessions/${id}/events`, { data: {} });
    expect(bad.status).toBe(400);
  });

  it("timeout: the alarm hands off once the agent held the session timeout_s without progress", async () => {
    const id = await session();
    const { stub } = sessionStub("alpha", id);
    await advanceClock(stub, 30_000);
    await drainDue(stub);
    expect(await current(id)).toBe("desk");
    await advanceClock(stub, 31_000);
    await drainDue(stub);
    expect(await current(id)).toBe("night");
    expect((await audit(id)).find((r) => r.action === "handoff.initiated")).toMatchObject({ actor: "trigger:timeout" });
  });

  it("timeout: progress in between pushes it back", async () => {
    const id = await session();
    const { stub } = sessionStub("alpha", id);
    await advanceClock(stub, 50_000);
    await call("PATCH", `/v1/sessions/${id}/state`, { set: { note: "still here" } });
    await advanceClock(stub, 20_000);
    await drainDue(stub);
    expect(await current(id)).toBe("desk");
    await advanceClock(stub, 41_000);
    await drainDue(stub);
    expect(await current(id)).toBe("night");
  });

  it("error: a failed turn with a listed error type hands the session to the fallback agent", async () => {
    script({ desk: [httpError(500)] });
    const id = await session();
    const res = await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "hello" });
    expect(res.json.run).toMatchObject({ status: "failed", error: { code: "MODEL_ERROR" } });
    await drainDue(sessionStub("alpha", id).stub);
    expect(await current(id)).toBe("fallback");
    expect((await audit(id)).find((r) => r.action === "handoff.initiated")).toMatchObject({ actor: "trigger:error" });
  });

  it("capability: a message needing what the agent lacks goes to the best match first, and that agent answers it", async () => {
    const fake = script({ legal: [answer("Legal here.")] });
    const id = await session();
    const res = await call("POST", `/v1/sessions/${id}/messages`, {
      role: "user",
      content: "review my contract",
      required_capabilities: ["contracts"],
    });
    expect(res.json.run).toMatchObject({ status: "completed", output: "Legal here.", output_agent: "legal" });
    expect(fake.requests).toHaveLength(1);
    // What the agent has: no handoff.
    script({ legal: [answer("Still legal.")] });
    const again = await call("POST", `/v1/sessions/${id}/messages`, {
      role: "user",
      content: "and this clause",
      required_capabilities: ["contracts"],
    });
    expect(again.json.run.output_agent).toBe("legal");
  });

  it("explicit: POST /triggers fires the current agent's explicit trigger for that target, and only that", async () => {
    const id = await session();
    const none = await call("POST", `/v1/sessions/${id}/triggers`, { target: "boss" });
    expect(none.status).toBe(404);
    expect(none.json.error.code).toBe("TRIGGER_NOT_FOUND");
    expect(await current(id)).toBe("desk");
    const fired = await call("POST", `/v1/sessions/${id}/triggers`, { target: "manager" });
    expect(fired.status).toBe(200);
    expect(fired.json).toMatchObject({ status: "completed", target: "manager" });
    expect(await current(id)).toBe("manager");
  });
});

describe("while the session is busy", () => {
  it("an event during a run is queued, then fires once when the run has ended — never twice", async () => {
    const model = heldModel("desk");
    const id = await session();
    const running = call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "slow" });
    await model.called;
    const [a, b] = await Promise.all([
      call("POST", `/v1/sessions/${id}/events`, { name: "outage", data: { severity: 5 } }),
      call("POST", `/v1/sessions/${id}/events`, { name: "outage", data: { severity: 5 } }),
    ]);
    expect(a.status).toBe(202);
    expect(a.json).toEqual({ handoff: null, queued: true });
    expect(b.json.queued).toBe(true);
    expect(await current(id)).toBe("desk");
    model.release();
    expect((await running).json.run.status).toBe("completed");
    await drainDue(sessionStub("alpha", id).stub);
    expect(await current(id)).toBe("ops");
    // The second queued event was evaluated against ops, which has no such trigger: one handoff.
    expect((await audit(id)).filter((r) => r.action === "handoff.completed")).toHaveLength(1);
  });

  it("an explicit trigger during a run is refused, not queued", async () => {
    const model = heldModel("desk");
    const id = await session();
    const running = call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "slow" });
    await model.called;
    const refused = await call("POST", `/v1/sessions/${id}/triggers`, { target: "manager" });
    expect(refused.status).toBe(409);
    expect(refused.json.error.code).toBe("RUN_IN_PROGRESS");
    model.release();
    await running;
    expect(await current(id)).toBe("desk");
  });
});

describe("a run's end", () => {
  /** Whether the session ever queued a point: its queue table is made with the first one. */
  const everQueued = (id: string) =>
    runInDurableObject(sessionStub("alpha", id).stub, (_instance, state) => {
      return state.storage.sql.exec("SELECT 1 FROM sqlite_master WHERE name = 'trigger_queue'").toArray().length > 0;
    });

  it("is not queued when the agent has no trigger that could answer it", async () => {
    script({ boss: [answer("done")] });
    const id = (await call("POST", "/v1/sessions", { agent: "boss" })).json.id;
    const res = await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "hello" });
    expect(res.json.run.status).toBe("completed");
    expect(await everQueued(id)).toBe(false);
    expect((await timersOf(sessionStub("alpha", id).stub)).timers.map((t) => t.kind)).not.toContain("triggers.drain");
  });

  it("is queued and evaluated when the agent has a trigger of its type", async () => {
    script({ desk: [answer("done")] });
    const id = await session();
    const res = await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "hello" });
    expect(res.json.run.status).toBe("completed");
    expect(await everQueued(id)).toBe(true);
    await drainDue(sessionStub("alpha", id).stub);
    expect(await current(id)).toBe("desk");
  });
});

describe("registration", () => {
  it("an expression that does not parse is 400 INVALID_EXPRESSION with its position; nothing is stored", async () => {
    const bad = {
      name: "bad-trigger",
      handoffs: [{ to: "boss", when: "auto", trigger: { type: "condition", expression: "refund >> 5" } }],
    };
    const res = await call("PUT", "/v1/agents/bad-trigger", bad);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({
      code: "INVALID_EXPRESSION",
      details: { path: "handoffs.0.trigger.expression", position: expect.any(Number) },
    });
    expect((await call("GET", "/v1/agents/bad-trigger")).status).toBe(404);
  });

  it("hostile expressions are refused or harmless: deep nesting, very long, __proto__", async () => {
    const deep = `${"(".repeat(200)}a${")".repeat(200)}`;
    const long = `a == '${"x".repeat(5000)}'`;
    for (const expression of [deep, long]) {
      const res = await call("PUT", "/v1/agents/hostile", {
        name: "hostile",
        handoffs: [{ to: "boss", when: "auto", trigger: { type: "condition", expression } }],
      });
      expect(res.status).toBe(400);
    }
    const proto = await call("PUT", "/v1/agents/hostile", {
      name: "hostile",
      handoffs: [
        {
          to: "boss",
          when: "auto",
          trigger: { type: "condition", expression: "__proto__.polluted == null and constructor == null" },
        },
      ],
    });
    // Names of the prototype machinery are not names in the language: refused where they stand.
    expect(proto.status).toBe(400);
    expect(proto.json.error).toMatchObject({
      code: "INVALID_EXPRESSION",
      details: { path: "handoffs.0.trigger.expression", position: 0, found: "'__proto__'" },
    });
    expect((await call("GET", "/v1/agents/hostile")).status).toBe(404);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
