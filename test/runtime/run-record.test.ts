import { describe, expect, it } from "vitest";
import {
  callDetails,
  executorOf,
  maxTurnsOf,
  mayContinue,
  moveRun,
  newRun,
  newRunId,
  RUN_TRANSITIONS,
  routeTraceEvent,
  sessionOfRun,
  traceArgs,
} from "../../src/runtime/run-record";
import { DEFAULT_MAX_TURNS, RUN_STATUSES, TraceDetails } from "../../src/schemas/run";

const scope = { tenant: "t", session_id: "ses_x" };
const actor = { actor: "relay", actor_type: "system" as const };
const run = newRun({ id: "run_1", session_id: "ses_x", agent: "desk", max_turns: 5, now: 0 });

describe("run transitions", () => {
  it.each(RUN_STATUSES.flatMap((from) => RUN_STATUSES.map((to) => [from, to] as const)))("%s → %s", (from, to) => {
    const moved = moveRun({ ...run, status: from }, to, {}, scope, actor, 1000);
    expect(moved !== null).toBe(RUN_TRANSITIONS[from].includes(to));
  });

  it("each transition carries its audit record; an ending sets ended_at and keeps the error", () => {
    const failed = moveRun(run, "failed", { error: { code: "MODEL_ERROR", message: "down" } }, scope, actor, 5000)!;
    expect(failed.run).toMatchObject({
      status: "failed",
      error: { code: "MODEL_ERROR" },
      ended_at: "1970-01-01T00:00:05.000Z",
    });
    expect(failed.record).toMatchObject({
      action: "run.failed",
      details: { run_id: "run_1", from: "running", to: "failed", error_code: "MODEL_ERROR" },
    });
    const paused = moveRun(run, "awaiting_human", {}, scope, actor, 5000)!;
    expect(paused.record.action).toBe("run.paused");
    expect(moveRun(paused.run, "running", {}, scope, actor, 6000)!.record.action).toBe("run.resumed");
  });

  it("run ids carry their session", () => {
    const session = `ses_${"a".repeat(52)}`;
    expect(sessionOfRun(newRunId(session, 0))).toBe(session);
    expect(sessionOfRun("run_nope")).toBeNull();
  });
});

describe("what a run's trace and limits read from their inputs", () => {
  it("shows tool arguments parsed when they are JSON, else as text cut at 1,000 characters", () => {
    expect(traceArgs('{"id":"a","n":2}')).toEqual({ id: "a", n: 2 });
    expect(traceArgs("not json")).toBe("not json");
    expect(traceArgs("x".repeat(1500))).toBe("x".repeat(1000));
  });

  it("takes max_turns from the session's metadata when it is a whole number from 1 to 100, else the default", () => {
    expect(maxTurnsOf({ max_turns: 3 })).toBe(3);
    expect(maxTurnsOf({ max_turns: 100 })).toBe(100);
    for (const bad of [0, 101, 2.5, "3", null]) expect(maxTurnsOf({ max_turns: bad })).toBe(DEFAULT_MAX_TURNS);
    expect(maxTurnsOf({})).toBe(DEFAULT_MAX_TURNS);
  });
});

describe("mayContinue: the run guard after an outside call", () => {
  it("holds only while the session is active and the run running", () => {
    expect(mayContinue({ status: "active" }, { status: "running" })).toBe(true);
    expect(mayContinue({ status: "expired" }, { status: "running" })).toBe(false);
    expect(mayContinue({ status: "active" }, { status: "failed" })).toBe(false);
    expect(mayContinue({ status: "active" }, { status: "awaiting_human" })).toBe(false);
    expect(mayContinue(null, { status: "running" })).toBe(false);
    expect(mayContinue({ status: "active" }, undefined)).toBe(false);
  });
});

describe("what a call's trace event records", () => {
  const answered = {
    ok: true as const,
    response: { content: "Hi.", tool_calls: [], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } },
    model: "gpt-4o",
    duration_ms: 300,
    streamed: true,
    facts: { finish_reasons: ["stop"], response_model: "gpt-4o-2024-08-06", first_chunk_ms: 120 },
  };

  it("a model's answer: the model asked, whether it streamed, the usage, and what the answer said of itself", () => {
    const details = callDetails("model", answered.model, answered);
    expect(details).toEqual({
      executor: "model",
      model: "gpt-4o",
      streamed: true,
      tokens: { prompt: 9, completion: 2, total: 11 },
      finish_reasons: ["stop"],
      response_model: "gpt-4o-2024-08-06",
      first_chunk_ms: 120,
    });
    expect(TraceDetails.safeParse(details).success).toBe(true);
  });

  it("a failed remote call keeps what it knew of its task; a failed model call has nothing more", () => {
    const a2a = { method: "SendMessage" as const, task_id: "task-9", task_state: "TASK_STATE_FAILED" };
    const failed = { ok: false as const, code: "REMOTE_AGENT_ERROR" as const, message: "x", duration_ms: 5 };
    expect(callDetails("a2a", "Remote", { ...failed, facts: { a2a } })).toEqual({
      executor: "a2a",
      model: "Remote",
      a2a,
    });
    expect(callDetails("model", "gpt-4o", failed)).toEqual({ executor: "model", model: "gpt-4o" });
  });

  it("names who answers each kind of agent", () => {
    expect([executorOf({ kind: "llm" }), executorOf({ kind: "webhook" }), executorOf({ kind: "a2a" })]).toEqual([
      "model",
      "webhook",
      "a2a",
    ]);
  });
});

describe("what the route's trace event records", () => {
  const SESSION = `ses_${"a".repeat(52)}`;

  it("each tier's time and whether the LLM tier was asked", () => {
    const rule = routeTraceEvent(SESSION, "billing", 0, {
      method: "rule",
      confidence: 92,
      latency_us: 1000,
      rule_us: 180,
    });
    expect(rule.details.route_tiers).toEqual({ rule_us: 180, llm_consulted: false });
    expect(rule.duration_ms).toBe(1);
    const llm = { provider: "openai" as const, model: "gpt-4o-mini", duration_ms: 640, tool_call: null };
    const asked = routeTraceEvent(SESSION, "tech", 0, {
      method: "llm",
      confidence: 10,
      latency_us: 641_000,
      rule_us: 0,
      llm,
    });
    expect(asked.details.route_tiers).toEqual({ rule_us: 0, llm_ms: 640, llm_consulted: true });
    expect(TraceDetails.safeParse(asked.details).success).toBe(true);
  });

  it("a decision without a rule tier time (strategy llm) has none", () => {
    const llm = { provider: "local" as const, model: "local", duration_ms: 3, tool_call: null };
    const event = routeTraceEvent(SESSION, "tech", 0, { method: "llm", confidence: 0, latency_us: 3000, llm });
    expect(event.details.route_tiers).toEqual({ llm_ms: 3, llm_consulted: true });
  });
});
