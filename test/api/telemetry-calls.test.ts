import { HttpResponse, http } from "msw";
import { beforeAll, describe, expect, it } from "vitest";
import type { TraceEvent } from "../../src/schemas/run";
import { GEN_AI, RELAY, SPAN_NAME } from "../../src/telemetry/semconv";
import { drainExports, sessionStub } from "../durable-objects/helpers";
import { answer, delayed, rawStream, streamChunks, whole } from "../fakes/openai";
import { attr, fakeOtlpReceiver, spansOf } from "../fakes/otlp-receiver";
import { llmServer } from "../fakes/server";
import { call } from "./helpers";
import { script } from "./run-fixtures";

/**
 * What a model call's trace event and span say of the call (docs/runs.md, Traces;
 * docs/observability.md, Spans), end to end: the OpenAI-compatible fake speaks the real wire —
 * a stream of chunks naming the model that answered and the finish reason, or one whole
 * completion — and the run's trace events and exported spans carry what it said.
 */

const ENDPOINT = "https://otel-calls.test/v1/traces";
/** The dated model a server answers with, beside the model asked for. */
const ANSWERED = "fake-model-2026-01-15";

beforeAll(async () => {
  await call("PUT", "/v1/tools/lookup_order", {
    name: "lookup_order",
    kind: "http",
    description: "Looks an order up",
    url: "https://tools.test/lookup",
    parameters: { type: "object", properties: { order_id: { type: "string" } } },
  });
  const desk = {
    name: "desk",
    description: "Front desk",
    triggers: { keywords: ["invoice"], priority: 50 },
    tools: { allow: ["lookup_order"] },
  };
  expect((await call("PUT", "/v1/agents/desk", desk)).status).toBeLessThan(300);
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
  expect((await call("PUT", "/v1/config/telemetry", { endpoint: ENDPOINT })).status).toBe(200);
});

const llmCalls = async (id: string): Promise<TraceEvent[]> =>
  ((await call("GET", `/v1/sessions/${id}/trace?limit=1000`)).json.items as TraceEvent[]).filter(
    (e) => e.event_type === "llm_call",
  );

describe("a model call's finish reasons, answering model and first chunk", () => {
  it("streamed and answered whole: in the trace events, and in the exported chat spans", async () => {
    llmServer.use(http.post("https://tools.test/lookup", () => HttpResponse.json({ status: "shipped" })));
    const receiver = fakeOtlpReceiver(ENDPOINT);
    // A streamed turn whose first chunk comes 50 ms after the request, calling the tool; a
    // streamed answer; then a turn the server answers whole.
    const toolTurn = streamChunks(ANSWERED, {
      kind: "tools",
      calls: [{ name: "lookup_order", arguments: { order_id: "o-1" } }],
    });
    script({
      desk: [
        delayed(50, rawStream(toolTurn)),
        rawStream(streamChunks(ANSWERED, { kind: "content", content: "It has shipped." })),
        whole(answer("Anything else?")),
      ],
    });
    const created = await call("POST", "/v1/sessions", { input: "my invoice is wrong" });
    expect(created.json.current_agent).toBe("desk");
    const id = created.json.id as string;
    const first = await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "where is o-1?" });
    expect(first.json.run.status).toBe("completed");
    const second = await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "thanks" });
    expect(second.json.run).toMatchObject({ status: "completed", output: "Anything else?" });

    const [tool, streamedAnswer, wholeAnswer] = await llmCalls(id);
    expect(tool!.details).toMatchObject({
      model: "fake-model",
      streamed: true,
      finish_reasons: ["tool_calls"],
      response_model: ANSWERED,
    });
    expect(tool!.details.first_chunk_ms).toBeGreaterThanOrEqual(50);
    expect(streamedAnswer!.details).toMatchObject({
      streamed: true,
      finish_reasons: ["stop"],
      response_model: ANSWERED,
    });
    expect(streamedAnswer!.details.first_chunk_ms).toBeGreaterThanOrEqual(0);
    // Answered whole: why it stopped and which model (the fake names the one asked for), no first chunk.
    expect(wholeAnswer!.details).toMatchObject({
      streamed: false,
      finish_reasons: ["stop"],
      response_model: "fake-model",
    });
    expect(wholeAnswer!.details.first_chunk_ms).toBeUndefined();
    // The route event says what each tier took: the rules decided, the LLM tier was not asked.
    const trace = (await call("GET", `/v1/sessions/${id}/trace`)).json.items as TraceEvent[];
    const route = trace.find((e) => e.event_type === "route")!;
    expect(route.details.route_tiers).toEqual({ rule_us: expect.any(Number), llm_consulted: false });

    await drainExports(sessionStub("alpha", id).stub);
    const spans = receiver.exports.flatMap(spansOf);
    const chatOf = (event: TraceEvent) =>
      spans.find((s) => s.name === SPAN_NAME.chat("fake-model") && attr(s, RELAY.traceEventId) === event.event_id)!;
    const toolSpan = chatOf(tool!);
    expect(attr(toolSpan, GEN_AI.responseFinishReasons)).toEqual({ values: [{ stringValue: "tool_calls" }] });
    expect(attr(toolSpan, GEN_AI.responseModel)).toBe(ANSWERED);
    expect(attr(toolSpan, GEN_AI.responseTimeToFirstChunk)).toBe(tool!.details.first_chunk_ms! / 1000);
    expect(toolSpan.attributes.find((a) => a.key === GEN_AI.responseTimeToFirstChunk)!.value).toHaveProperty(
      "doubleValue",
    );
    const wholeSpan = chatOf(wholeAnswer!);
    expect(attr(wholeSpan, GEN_AI.responseFinishReasons)).toEqual({ values: [{ stringValue: "stop" }] });
    expect(attr(wholeSpan, GEN_AI.responseModel)).toBe("fake-model");
    expect(attr(wholeSpan, GEN_AI.responseTimeToFirstChunk)).toBeUndefined();
    expect(attr(wholeSpan, RELAY.llmStreamed)).toBe(false);
    const routeSpan = spans.find((s) => s.name === SPAN_NAME.route)!;
    expect(attr(routeSpan, RELAY.routeLlmConsulted)).toBe(false);
    expect(attr(routeSpan, RELAY.routeRuleUs)).toBe(String(route.details.route_tiers!.rule_us));
  });
});
