import { describe, expect, it } from "vitest";
import { routeTraceEvent, traceEvent } from "../../src/runtime/run-record";
import { type TraceDetails, type TraceEvent, TraceEvent as TraceEventSchema } from "../../src/schemas/run";
import { type RunTraceInput, spansFromRun } from "../../src/telemetry/from-trace";
import { otlpSpan } from "../../src/telemetry/otlp-json";
import { A2A, GEN_AI, RELAY, SPAN_NAME } from "../../src/telemetry/semconv";
import { Span } from "../../src/telemetry/span";

/**
 * What a model call's, a remote agent's and the router's spans say of the call beyond its
 * time (docs/observability.md, Spans): the response attributes of the GenAI conventions, the
 * A2A conventions' method and task, and the route's tier timings — each from its trace event.
 */

const SESSION = `ses_${"b".repeat(52)}`;
const RUN = { id: `run_${"0".repeat(26)}_${SESSION}`, session_id: SESSION };
const T0 = Date.parse("2026-11-28T10:00:00.000Z");

const input = (events: TraceEvent[]): RunTraceInput => ({
  run_id: RUN.id,
  session_id: SESSION,
  events,
  settings: { capture_content: false },
  provider: "openai",
});

/** One agent's turn with one call: its llm_call (or agent_error) event and the turn's end. */
function turnWith(agent: string, details: TraceDetails, error: string | null = null): TraceEvent[] {
  const events = [
    traceEvent(RUN, "agent_start", agent, T0, { outcome: "run started" }),
    traceEvent(RUN, error ? "agent_error" : "llm_call", agent, T0 + 900, details, 900, error),
  ];
  if (!error) events.push(traceEvent(RUN, "agent_complete", agent, T0 + 900, { outcome: "final answer" }));
  for (const e of events) expect(TraceEventSchema.safeParse(e).success).toBe(true);
  return events;
}

const spanNamed = (events: TraceEvent[], name: string) => {
  const { spans } = spansFromRun(input(events));
  for (const s of spans) expect(Span.safeParse(s).success).toBe(true);
  const found = spans.find((s) => s.name === name);
  expect(found, name).toBeDefined();
  return found!;
};

describe("a model call's span", () => {
  it("a streamed call: finish reasons as a string array, the model that answered, the first chunk in seconds", () => {
    const chat = spanNamed(
      turnWith("desk", {
        executor: "model",
        model: "gpt-4o",
        streamed: true,
        finish_reasons: ["tool_calls"],
        response_model: "gpt-4o-2024-08-06",
        first_chunk_ms: 250,
      }),
      SPAN_NAME.chat("gpt-4o"),
    );
    expect(chat.attributes).toMatchObject({
      [GEN_AI.requestModel]: "gpt-4o",
      [GEN_AI.requestStream]: true,
      [GEN_AI.responseFinishReasons]: ["tool_calls"],
      [GEN_AI.responseModel]: "gpt-4o-2024-08-06",
      [GEN_AI.responseTimeToFirstChunk]: { double: 0.25 },
    });
    // On the wire: an array of strings, and a double even for a whole number of seconds.
    const wire = otlpSpan({
      ...chat,
      attributes: { ...chat.attributes, [GEN_AI.responseTimeToFirstChunk]: { double: 1 } },
    }).attributes;
    expect(wire).toContainEqual({
      key: GEN_AI.responseFinishReasons,
      value: { arrayValue: { values: [{ stringValue: "tool_calls" }] } },
    });
    expect(wire).toContainEqual({ key: GEN_AI.responseTimeToFirstChunk, value: { doubleValue: 1 } });
  });

  it("a call answered whole has finish reasons and no first chunk; a call recorded without them has neither", () => {
    const whole = spanNamed(
      turnWith("desk", { executor: "model", model: "gpt-4o", streamed: false, finish_reasons: ["stop"] }),
      SPAN_NAME.chat("gpt-4o"),
    );
    expect(whole.attributes[GEN_AI.responseFinishReasons]).toEqual(["stop"]);
    expect(whole.attributes[GEN_AI.responseTimeToFirstChunk]).toBeUndefined();
    expect(whole.attributes[GEN_AI.responseModel]).toBeUndefined();
    const older = spanNamed(turnWith("desk", { executor: "model", model: "gpt-4o" }), SPAN_NAME.chat("gpt-4o"));
    for (const key of [GEN_AI.responseFinishReasons, GEN_AI.responseModel, GEN_AI.responseTimeToFirstChunk])
      expect(older.attributes[key], key).toBeUndefined();
  });
});

describe("a remote A2A agent's call", () => {
  const client = (events: TraceEvent[]) => spansFromRun(input(events)).spans.find((s) => s.kind === "client")!;

  it("is the A2A conventions' client span, named by the method, with the remote task and its state", () => {
    const a2a = { method: "SendStreamingMessage" as const, task_id: "task-7", task_state: "TASK_STATE_COMPLETED" };
    const { spans } = spansFromRun(
      input(turnWith("helper", { executor: "a2a", model: "Remote Helper", streamed: true, a2a })),
    );
    const span = spans.find((s) => s.kind === "client")!;
    expect(span.name).toBe("SendStreamingMessage");
    // Under the remote agent's turn, the agent operation the request serves.
    expect(span.parent_span_id).toBe(spans.find((s) => s.name === SPAN_NAME.invokeAgent("helper"))!.span_id);
    expect(span.attributes[GEN_AI.operationName]).toBeUndefined();
    expect(span.attributes[GEN_AI.conversationId]).toBeUndefined();
    expect(span.attributes).toMatchObject({
      [GEN_AI.agentName]: "helper",
      [GEN_AI.providerName]: "relay.a2a",
      [A2A.methodName]: "SendStreamingMessage",
      [A2A.taskId]: "task-7",
      [A2A.taskState]: "TASK_STATE_COMPLETED",
    });
  });

  it("a failed call keeps its error and the task's state; an answer with no task has no task attributes", () => {
    const failed = client(
      turnWith(
        "helper",
        {
          executor: "a2a",
          model: "Remote Helper",
          a2a: { method: "SendMessage", task_id: "task-8", task_state: "TASK_STATE_FAILED" },
        },
        "REMOTE_AGENT_ERROR",
      ),
    );
    expect(failed.status.code).toBe("error");
    expect(failed.attributes).toMatchObject({
      "error.type": "REMOTE_AGENT_ERROR",
      [A2A.methodName]: "SendMessage",
      [A2A.taskState]: "TASK_STATE_FAILED",
    });
    const message = client(
      turnWith("helper", { executor: "a2a", model: "Remote Helper", a2a: { method: "SendMessage" } }),
    );
    expect(message.name).toBe("SendMessage");
    expect(message.attributes[A2A.methodName]).toBe("SendMessage");
    expect(message.attributes[A2A.taskId]).toBeUndefined();
    expect(message.attributes[A2A.taskState]).toBeUndefined();
  });
});

describe("the route's span", () => {
  const route = (event: TraceEvent) => spansFromRun(input([event])).spans.find((s) => s.name === SPAN_NAME.route)!;

  it("carries each tier's time and whether the LLM tier was asked", () => {
    const llm = { provider: "openai" as const, model: "gpt-4o-mini", duration_ms: 640, tool_call: null };
    const asked = route(
      routeTraceEvent(SESSION, "tech", T0, { method: "llm", confidence: 12, latency_us: 641_000, rule_us: 0, llm }),
    );
    expect(asked.attributes).toMatchObject({
      [RELAY.routeRuleUs]: 0,
      [RELAY.routeLlmMs]: 640,
      [RELAY.routeLlmConsulted]: true,
    });
    const ruled = route(
      routeTraceEvent(SESSION, "billing", T0, { method: "rule", confidence: 92, latency_us: 180, rule_us: 150 }),
    );
    expect(ruled.attributes).toMatchObject({ [RELAY.routeRuleUs]: 150, [RELAY.routeLlmConsulted]: false });
    expect(ruled.attributes[RELAY.routeLlmMs]).toBeUndefined();
  });

  it("a route recorded before the tiers were timed has no tier attributes", () => {
    const event = routeTraceEvent(SESSION, "billing", T0, { method: "rule", confidence: 92, latency_us: 180 });
    const { route_tiers: _tiers, ...details } = event.details;
    const span = route({ ...event, details });
    expect(Object.keys(span.attributes).filter((k) => k.startsWith("relay.route.tier."))).toEqual([]);
  });
});
