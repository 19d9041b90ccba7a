import { beforeAll, describe, expect, it } from "vitest";
import { newSessionId } from "../../src/sessions/ids";
import { advanceClock, drainDue, sessionStub } from "../durable-objects/helpers";
import { answer, callTool, delayed, httpError } from "../fakes/openai";
import type { SessionDO } from "../worker";
import { BETA_KEY, call } from "./helpers";
import { protocolErrors, script } from "./run-fixtures";

/**
 * Supervisor fan-out (docs/collaboration.md, Supervisor fan-out): tasks run in parallel on their
 * agents, results come in
 * as they finish, the supervisor aggregates; a failing task is named in the answer, a
 * task that times out fails the fan-out with the partial results kept.
 */

const AGENTS = [
  { name: "planner", description: "Plans trips", handoffs: ["weather", "finance", "travel"] },
  { name: "weather", description: "Weather", triggers: { keywords: ["weather", "rain", "sunny"] } },
  { name: "finance", description: "Budgets", triggers: { keywords: ["cost", "budget", "price"] }, timeout_s: 1 },
  { name: "travel", description: "Trains and flights", triggers: { keywords: ["train", "flight"] } },
  { name: "stranger", description: "Not the planner's", triggers: { keywords: ["weather"] } },
];

const QUESTION =
  "What's the weather in Lisbon this weekend? How much will two nights cost, and which train goes there from Porto?";

beforeAll(async () => {
  for (const agent of AGENTS) {
    const res = await call("PUT", `/v1/agents/${agent.name}`, agent);
    if (res.status >= 300) throw new Error(JSON.stringify(res.json));
  }
});

async function session(): Promise<string> {
  return (await call("POST", "/v1/sessions", { agent: "planner" })).json.id;
}

describe("fan-out", () => {
  it("offline: Relay splits the question among the planner's agents, runs them, and aggregates (the docs/collaboration.md demo)", async () => {
    const id = await session();
    const res = await call("POST", `/v1/sessions/${id}/fan-out`, { input: QUESTION });
    expect(res.status).toBe(200);
    const fanout = res.json;
    expect(fanout).toMatchObject({ supervisor: "planner", state: "COMPLETED", decomposed_by: "rules" });
    expect(fanout.decomposition.tasks.map((t: { agent: string }) => t.agent)).toEqual(["weather", "finance", "travel"]);
    expect(fanout.decomposition.requires_aggregation).toBe(true);
    expect(fanout.states.map((s: { state: string }) => s.state)).toEqual([
      "INIT",
      "DECOMPOSED",
      "EXECUTING",
      "AGGREGATING",
      "COMPLETED",
    ]);
    expect(fanout.results).toHaveLength(3);
    for (const r of fanout.results)
      expect(r).toMatchObject({
        success: true,
        data: expect.stringContaining("local provider (offline, not a model) answering"),
        execution_time: expect.any(Number),
      });
    // Each agent was asked its own part.
    expect(fanout.results.find((r: { agent: string }) => r.agent === "travel").data).toContain(
      "which train goes there from Porto?",
    );
    expect(fanout.response.split("\n").map((line: string) => line.split(":")[0])).toEqual([
      "weather",
      "finance",
      "travel",
    ]);
    // The question and the answer are in the conversation; the fan-out reads back.
    const history = (await call("GET", `/v1/sessions/${id}/messages`)).json.items;
    expect(history.map((i: { role: string }) => i.role)).toEqual(["user", "assistant"]);
    expect(history[1]).toMatchObject({ agent: "planner", content: fanout.response });
    expect((await call("GET", `/v1/sessions/${id}/fan-outs/${fanout.id}`)).json).toEqual(fanout);
    expect((await call("GET", `/v1/sessions/${id}/fan-outs/fan_nope`)).status).toBe(404);
  });

  describe("with a model", () => {
    beforeAll(async () => {
      await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
    });

    const decomposition = {
      original_query: "Weekend in Lisbon?",
      tasks: [
        { task_id: "w", agent: "weather", instruction: "Weather in Lisbon", timeout_s: 5 },
        { task_id: "f", agent: "finance", instruction: "Budget for two nights", timeout_s: 5 },
        { task_id: "t", agent: "travel", instruction: "Trains from Porto", timeout_s: 5 },
      ],
    };

    it("all succeed: every result recorded, the supervisor's aggregate is the answer", async () => {
      const fake = script({
        weather: [answer("Sunny, 24°C")],
        finance: [answer("About €400")],
        travel: [answer("3h by train")],
        planner: [answer("Go: sunny, €400, 3h by train.")],
      });
      const id = await session();
      const res = await call("POST", `/v1/sessions/${id}/fan-out`, { decomposition });
      expect(res.json).toMatchObject({
        state: "COMPLETED",
        decomposed_by: "request",
        response: "Go: sunny, €400, 3h by train.",
      });
      expect(
        Object.fromEntries(res.json.results.map((r: { task_id: string; data: string }) => [r.task_id, r.data])),
      ).toEqual({ w: "Sunny, 24°C", f: "About €400", t: "3h by train" });
      const aggregation = fake.requests.find((r) =>
        String(r.body.messages[0]!.content).startsWith("You are 'planner'"),
      )!;
      expect(aggregation.body.messages.at(-1)!.content).toContain("- finance (f): About €400");
    });

    it("given only the request, the supervisor's model plans the tasks with plan_tasks (and a plan that does not fit falls back to Relay's)", async () => {
      const fake = script({
        planner: [
          callTool("plan_tasks", {
            tasks: [
              { agent: "weather", instruction: "Lisbon weather" },
              { agent: "travel", instruction: "Porto to Lisbon trains" },
            ],
          }),
          answer("Sunny; 3h by train."),
        ],
        weather: [answer("Sunny")],
        travel: [answer("3h")],
      });
      const id = await session();
      const res = await call("POST", `/v1/sessions/${id}/fan-out`, { input: "Weekend in Lisbon from Porto?" });
      expect(res.json).toMatchObject({ state: "COMPLETED", decomposed_by: "model", response: "Sunny; 3h by train." });
      expect(
        res.json.decomposition.tasks.map((t: { agent: string; instruction: string }) => [t.agent, t.instruction]),
      ).toEqual([
        ["weather", "Lisbon weather"],
        ["travel", "Porto to Lisbon trains"],
      ]);
      const planning = fake.requests[0]!;
      expect(planning.body.tool_choice).toBe("required");
      expect(planning.body.tools!.map((t) => t.function.name)).toEqual(["plan_tasks"]);

      script({
        planner: [callTool("plan_tasks", { tasks: [{ agent: "stranger", instruction: "x" }] }), answer("ok")],
        weather: [answer("Sunny")],
      });
      const id2 = await session();
      const fallback = await call("POST", `/v1/sessions/${id2}/fan-out`, { input: "Will it rain in Lisbon?" });
      expect(fallback.json).toMatchObject({ decomposed_by: "rules", decomposition: { tasks: [{ agent: "weather" }] } });
    });

    it("in a run: a supervisor allowed fan_out calls it, the tasks run, and the aggregate is the call's output", async () => {
      await call("PUT", "/v1/agents/lead", {
        name: "lead",
        description: "Lead",
        handoffs: ["weather", "travel"],
        tools: { allow: ["fan_out"] },
      });
      const fake = script({
        lead: [
          callTool("fan_out", {
            tasks: [
              { agent: "weather", instruction: "Lisbon weather" },
              { agent: "travel", instruction: "Porto trains" },
            ],
          }),
          answer("Sunny; 3h."),
          answer("Go: it is sunny and 3h by train."),
        ],
        weather: [answer("Sunny")],
        travel: [answer("3h")],
      });
      const id = (await call("POST", "/v1/sessions", { agent: "lead" })).json.id;
      const res = await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "weekend in Lisbon?" });
      expect(res.json.run).toMatchObject({ status: "completed", output: "Go: it is sunny and 3h by train." });
      const last = fake.requests.at(-1)!;
      expect(last.body.messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual(["Sunny; 3h."]);
      expect(protocolErrors(last)).toEqual([]);
      const toolEvent = res.json.run.events.find(
        (e: { details: { tool_name?: string } }) => e.details.tool_name === "fan_out",
      );
      expect(toolEvent).toMatchObject({ details: { outcome: "ok" } });
    });

    it("one task fails: the fan-out completes, the failure named to the supervisor", async () => {
      const fake = script({
        weather: [answer("Sunny")],
        finance: [httpError(500)],
        travel: [answer("3h")],
        planner: [answer("Sunny and 3h by train; the budget is unknown.")],
      });
      const id = await session();
      const res = await call("POST", `/v1/sessions/${id}/fan-out`, { decomposition });
      expect(res.json.state).toBe("COMPLETED");
      expect(res.json.results.find((r: { task_id: string }) => r.task_id === "f")).toMatchObject({
        success: false,
        error: "MODEL_ERROR",
      });
      const aggregation = fake.requests.find((r) =>
        String(r.body.messages[0]!.content).startsWith("You are 'planner'"),
      )!;
      expect(aggregation.body.messages.at(-1)!.content).toContain("- finance (f): failed: MODEL_ERROR");
    });

    it("one task times out: the fan-out fails with the partial results kept, by the ending rule", async () => {
      script({ weather: [answer("Sunny")], finance: [delayed(2_000, answer("too late"))], travel: [answer("3h")] });
      const id = await session();
      const res = await call("POST", `/v1/sessions/${id}/fan-out`, { decomposition });
      expect(res.json).toMatchObject({ state: "FAILED", response: null });
      expect(res.json.results.find((r: { task_id: string }) => r.task_id === "f")).toMatchObject({
        success: false,
        error: "TASK_TIMEOUT",
      });
      expect(res.json.results.filter((r: { success: boolean }) => r.success)).toHaveLength(2);
      expect(res.json.states.at(-1).state).toBe("FAILED");
      const audit = (await call("GET", `/v1/sessions/${id}/audit?limit=100`)).json.items.map(
        (r: { action: string }) => r.action,
      );
      expect(audit.filter((a: string) => a === "fanout.task_finished")).toHaveLength(3);
      expect(audit).toContain("fanout.failed");
    });

    it("refuses tasks for agents off the supervisor's whitelist, a bad decomposition, and both or neither of input and decomposition", async () => {
      const id = await session();
      const off = await call("POST", `/v1/sessions/${id}/fan-out`, {
        decomposition: { original_query: "q", tasks: [{ task_id: "s", agent: "stranger", instruction: "i" }] },
      });
      expect(off.status).toBe(422);
      expect(off.json.error).toMatchObject({ code: "HANDOFF_NOT_ALLOWED", details: { refused: ["stranger"] } });
      const bad = await call("POST", `/v1/sessions/${id}/fan-out`, {
        decomposition: { original_query: "q", tasks: [] },
      });
      expect(bad.status).toBe(400);
      expect((await call("POST", `/v1/sessions/${id}/fan-out`, {})).status).toBe(400);
      expect((await call("POST", `/v1/sessions/${id}/fan-out`, { input: "x", decomposition })).status).toBe(400);
      // The model makes no plan, and no clause matches an agent's triggers.
      script({ planner: [answer("I would not split that.")] });
      const nothing = await call("POST", `/v1/sessions/${id}/fan-out`, { input: "hello there" });
      expect(nothing.json.error.code).toBe("NO_ROUTE");
      expect((await call("GET", `/v1/sessions/${id}/messages`)).json.items).toEqual([]);
    });

    it("a fan-out its instance left executing is ended by its deadline timer", async () => {
      script({ weather: [answer("Sunny")], finance: [answer("€400")], travel: [answer("3h")] });
      const id = await session();
      const { stub } = sessionStub("alpha", id);
      // Leave a fan-out executing as a crash would: its record, its deadline timer, no tasks running.
      const { runInDurableObject } = await import("cloudflare:test");
      const fid = await runInDurableObject(stub, (instance: SessionDO) => {
        const record = {
          id: "fan_crashed",
          session_id: id,
          supervisor: "planner",
          state: "EXECUTING",
          decomposed_by: "request",
          decomposition: { ...decomposition, requires_aggregation: true },
          results: [{ task_id: "w", agent: "weather", success: true, data: "Sunny", execution_time: 5 }],
          response: null,
          states: [
            { state: "INIT", at: new Date().toISOString() },
            { state: "DECOMPOSED", at: new Date().toISOString() },
            { state: "EXECUTING", at: new Date().toISOString() },
          ],
          started_at: new Date().toISOString(),
          ended_at: null,
        };
        instance
          .ownSql()
          .exec(
            "INSERT INTO fanouts (id, state, record) VALUES (?, ?, ?)",
            record.id,
            record.state,
            JSON.stringify(record),
          );
        instance
          .ownSql()
          .exec(
            "INSERT INTO timers (id, kind, key, due_at, payload) VALUES ('t_crash', 'fanout.deadline', 'fanout:fan_crashed', ?, ?)",
            Date.now() + 15_000,
            JSON.stringify({ fanout_id: "fan_crashed" }),
          );
        return record.id;
      });
      await advanceClock(stub, 16_000);
      await drainDue(stub);
      const ended = (await call("GET", `/v1/sessions/${id}/fan-outs/${fid}`)).json;
      expect(ended).toMatchObject({ state: "FAILED" });
      expect(ended.results.map((r: { task_id: string; error?: string }) => [r.task_id, r.error ?? "ok"])).toEqual([
        ["w", "ok"],
        ["f", "TASK_TIMEOUT"],
        ["t", "TASK_TIMEOUT"],
      ]);
    });
  });
});

describe("fan-out on a session that is not there", () => {
  it("is 404 SESSION_NOT_FOUND for an id of nothing and for another tenant's session, and creates nothing", async () => {
    const nothing = newSessionId();
    const missing = await call("POST", `/v1/sessions/${nothing}/fan-out`, { input: QUESTION });
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe("SESSION_NOT_FOUND");
    const theirs = (await call("POST", "/v1/sessions", { agent: "planner" })).json.id;
    const other = await call("POST", `/v1/sessions/${theirs}/fan-out`, { input: QUESTION }, { key: BETA_KEY });
    expect(other.status).toBe(404);
    expect(other.json.error.code).toBe("SESSION_NOT_FOUND");
    // Neither call made a session where there was none.
    expect((await call("GET", `/v1/sessions/${nothing}`)).status).toBe(404);
    expect((await call("GET", `/v1/sessions/${theirs}`, undefined, { key: BETA_KEY })).status).toBe(404);
    expect((await call("GET", `/v1/sessions/${theirs}/messages`)).json.items).toEqual([]);
  });
});
