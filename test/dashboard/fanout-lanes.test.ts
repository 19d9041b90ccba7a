import { beforeAll, describe, expect, it } from "vitest";
import { fanoutLanes, noAggregateReason } from "../../public/app/fanout-lanes.js";
import { call } from "../api/helpers";
import { script } from "../api/run-fixtures";
import { answer, delayed, httpError } from "../fakes/openai";

/** A fan-out's tasks as the session page's lanes, from fan-outs the Worker really ran. */

const AGENTS = [
  { name: "planner", description: "Plans trips", handoffs: ["weather", "finance", "travel"] },
  { name: "weather", description: "Weather", triggers: { keywords: ["weather"] } },
  { name: "finance", description: "Budgets", triggers: { keywords: ["cost"] } },
  { name: "travel", description: "Trains", triggers: { keywords: ["train"] } },
];

beforeAll(async () => {
  for (const agent of AGENTS) await call("PUT", `/v1/agents/${agent.name}`, agent);
});

const fanOut = async (body: object) => {
  const id = (await call("POST", "/v1/sessions", { agent: "planner" })).json.id;
  return (await call("POST", `/v1/sessions/${id}/fan-out`, body)).json;
};

type Lane = { task_id: string; agent: string; state: string; ms: number; timeout_ms: number; error: string | null };

describe("fanoutLanes", () => {
  it("offline: a lane per task, each succeeded, and the aggregate below", async () => {
    const fanout = await fanOut({ input: "What is the weather? What will it cost? Which train?" });
    expect(fanout.state).toBe("COMPLETED");
    const view = fanoutLanes(fanout);
    expect(view.lanes.map((l: Lane) => [l.agent, l.state])).toEqual([
      ["weather", "succeeded"],
      ["finance", "succeeded"],
      ["travel", "succeeded"],
    ]);
    expect(view.ended).toBe(true);
    expect(view.aggregate).toBe(fanout.response);
    expect(view.scale).toBeGreaterThanOrEqual(Math.max(...view.lanes.map((l: Lane) => l.ms)));
    expect(noAggregateReason(fanout)).toBeNull();
  });

  it("with a model: one lane succeeded, one failed, one timed out — and why there is no aggregate", async () => {
    await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
    script({
      weather: [answer("Sunny")],
      finance: [httpError(500)],
      travel: [delayed(3000, answer("too late"))],
    });
    const fanout = await fanOut({
      decomposition: {
        original_query: "Weekend?",
        tasks: [
          { task_id: "w", agent: "weather", instruction: "Weather", timeout_s: 5 },
          { task_id: "f", agent: "finance", instruction: "Budget", timeout_s: 5 },
          { task_id: "t", agent: "travel", instruction: "Trains", timeout_s: 1 },
        ],
      },
    });
    expect(fanout.state).toBe("FAILED");
    const view = fanoutLanes(fanout);
    expect(view.lanes.map((l: Lane) => [l.task_id, l.state, l.error, l.timeout_ms])).toEqual([
      ["w", "succeeded", null, 5000],
      ["f", "failed", "MODEL_ERROR", 5000],
      ["t", "timed_out", "TASK_TIMEOUT", 1000],
    ]);
    expect(view.lanes[0].output).toBe("Sunny");
    expect(noAggregateReason(fanout)).toBe("No aggregate: t ran out of time, so the fan-out failed.");
  });
});

describe("fanoutLanes while a fan-out runs", () => {
  const running = {
    state: "EXECUTING",
    started_at: "2026-01-01T00:00:00.000Z",
    ended_at: null,
    response: null,
    decomposition: {
      tasks: [
        { task_id: "a", agent: "x", instruction: "i", timeout_s: 60 },
        { task_id: "b", agent: "y", instruction: "j", timeout_s: 30 },
      ],
    },
    results: [{ task_id: "a", agent: "x", success: true, data: { n: 1 }, execution_time: 800 }],
  };

  it("grows the running lane with the clock, on a scale that reaches its timeout", () => {
    const view = fanoutLanes(running, Date.parse("2026-01-01T00:00:02.000Z"));
    expect(view.lanes.map((l: Lane) => [l.state, l.ms])).toEqual([
      ["succeeded", 800],
      ["running", 2000],
    ]);
    expect(view.lanes[0].output).toBe('{"n":1}');
    expect(view.scale).toBe(30_000);
    expect(view.ended).toBe(false);
    expect(noAggregateReason(running)).toBeNull();
  });

  it("calls a task a finished fan-out has no result for not run", () => {
    const view = fanoutLanes({ ...running, state: "FAILED", ended_at: "2026-01-01T00:01:00.000Z" });
    expect(view.lanes[1]).toMatchObject({ state: "not run", ms: 0 });
  });
});
