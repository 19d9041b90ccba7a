import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { HttpResponse, http } from "msw";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { getTelemetryStats } from "../../src/registry/telemetry-config-store";
import { STATS_FLUSH_MS } from "../../src/services/telemetry-stats";
import { EXPORT_RETRY_DELAYS_MS, MAX_QUEUED_EXPORTS } from "../../src/telemetry/export-policy";
import { GEN_AI, RELAY, SPAN_NAME } from "../../src/telemetry/semconv";
import { advanceClock, drainExports, sessionStub } from "../durable-objects/helpers";
import { answer, callTool } from "../fakes/openai";
import { attr, fakeOtlpReceiver, spansOf } from "../fakes/otlp-receiver";
import { llmServer } from "../fakes/server";
import type { SessionDO } from "../worker";
import { call, putSecret } from "./helpers";
import { script } from "./run-fixtures";

/**
 * Trace export end to end (docs/observability.md, Export): a run that ends is exported once,
 * after its commit, by the session's alarm, to an OTLP/HTTP receiver faked at the fetch boundary
 * speaking the real wire (POST JSON to /v1/traces; 200, 4xx, 5xx), with the tenant's settings
 * from the API and its header from the vault.
 */

const ENDPOINT = "https://otel.test/v1/traces";
const TOKEN = "Bearer otel-secret-value";

beforeAll(async () => {
  await putSecret("otel-token", TOKEN);
  await call("PUT", "/v1/tools/pick_date", { name: "pick_date", kind: "client", description: "Picks a date" });
  await call("PUT", "/v1/tools/lookup_order", {
    name: "lookup_order",
    kind: "http",
    description: "Looks an order up",
    url: "https://tools.test/lookup",
    parameters: { type: "object", properties: { order_id: { type: "string" } } },
  });
  for (const agent of [
    {
      name: "desk",
      description: "Front desk",
      triggers: { keywords: ["invoice"], priority: 50 },
      handoffs: ["billing"],
      tools: { allow: ["lookup_order", "pick_date"] },
    },
    { name: "billing", description: "Billing" },
  ]) {
    const res = await call("PUT", `/v1/agents/${agent.name}`, agent);
    if (res.status >= 300) throw new Error(JSON.stringify(res.json));
  }
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
});

beforeEach(() => {
  llmServer.use(http.post("https://tools.test/lookup", () => HttpResponse.json({ status: "shipped" })));
});

const configure = (body: Record<string, unknown> = {}) =>
  call("PUT", "/v1/config/telemetry", { endpoint: ENDPOINT, headers: { Authorization: "otel-token" }, ...body });

/** A routed session whose run calls the tool, hands off, and is answered; drained unless asked not to. */
async function conversation(drain = true): Promise<{ id: string; stub: DurableObjectStub<SessionDO> }> {
  script({
    desk: [callTool("lookup_order", { order_id: "o-1" }), callTool("transfer_to_billing", { reason: "a refund" })],
    billing: [answer("Refunded.")],
  });
  const created = await call("POST", "/v1/sessions", { input: "my invoice is wrong" });
  expect(created.status).toBe(201);
  const id = created.json.id as string;
  const res = await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "order o-1, please refund" });
  expect(res.json.run.status).toBe("completed");
  const { stub } = sessionStub("alpha", id);
  if (drain) await drainExports(stub);
  return { id, stub };
}

const exportRows = (stub: DurableObjectStub<SessionDO>) =>
  runInDurableObject(stub, (_instance, state) => {
    const held = state.storage.sql.exec("SELECT 1 FROM sqlite_master WHERE name = 'telemetry_exports'").toArray();
    return held.length === 0
      ? 0
      : (state.storage.sql.exec("SELECT COUNT(*) AS n FROM telemetry_exports").one() as { n: number }).n;
  });

const stats = async () => (await call("GET", "/v1/config/telemetry")).json.stats;

describe("trace export", () => {
  it("sends nothing without settings", async () => {
    await call("DELETE", "/v1/config/telemetry");
    const receiver = fakeOtlpReceiver(ENDPOINT);
    const { stub } = await conversation();
    expect(receiver.exports).toHaveLength(0);
    expect(await exportRows(stub)).toBe(0);
  });

  it("a routed run with a tool call and a handoff is one export of one trace, in the GenAI conventions, without content", async () => {
    expect((await configure()).status).toBe(200);
    const before = await stats();
    const receiver = fakeOtlpReceiver(ENDPOINT);
    const { id, stub } = await conversation();
    expect(receiver.exports).toHaveLength(1);
    const sent = receiver.exports[0]!;
    expect(sent.headers.authorization).toBe(TOKEN);
    expect(sent.body.resourceSpans[0]!.resource.attributes).toContainEqual({
      key: RELAY.tenant,
      value: { stringValue: "alpha" },
    });
    const spans = spansOf(sent);
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    const names = spans.map((s) => s.name);
    for (const name of [
      SPAN_NAME.route,
      SPAN_NAME.invokeAgent("desk"),
      SPAN_NAME.chat("fake-model"),
      SPAN_NAME.executeTool("lookup_order"),
      SPAN_NAME.handoff,
      SPAN_NAME.invokeAgent("billing"),
    ])
      expect(names).toContain(name);
    const byName = (name: string) => spans.find((s) => s.name === name)!;
    expect(attr(byName(SPAN_NAME.route), RELAY.routeAgent)).toBe("desk");
    const desk = byName(SPAN_NAME.invokeAgent("desk"));
    expect(attr(desk, GEN_AI.conversationId)).toBe(id);
    expect(attr(desk, RELAY.agentOutcome)).toBe("handed_off");
    expect(attr(byName(SPAN_NAME.invokeAgent("billing")), RELAY.agentOutcome)).toBe("completed");
    const chat = byName(SPAN_NAME.chat("fake-model"));
    expect(attr(chat, GEN_AI.providerName)).toBe("openai");
    expect(chat.parentSpanId).toBe(desk.spanId);
    const tool = byName(SPAN_NAME.executeTool("lookup_order"));
    expect(attr(tool, GEN_AI.toolName)).toBe("lookup_order");
    expect(attr(tool, RELAY.toolKind)).toBe("http");
    expect(attr(byName(SPAN_NAME.handoff), RELAY.handoffTo)).toBe("billing");
    // Content is off by default.
    expect(spans.flatMap((s) => s.attributes.map((a) => a.key))).not.toContain(GEN_AI.toolCallArguments);
    expect(spans.flatMap((s) => s.attributes.map((a) => a.key))).not.toContain(RELAY.handoffReason);
    expect(spans.flatMap((s) => s.attributes.map((a) => a.key))).not.toContain(GEN_AI.inputMessages);
    expect(await exportRows(stub)).toBe(0);
    expect((await stats()).exported_spans).toBe(before.exported_spans + spans.length);
    // Nothing more later: the export was sent once.
    await advanceClock(stub, 3_600_000);
    await drainExports(stub);
    expect(receiver.exports).toHaveLength(1);
  });

  it("sessions exporting at the same time share one request, each its own trace, and each counts its own spans", async () => {
    expect((await configure()).status).toBe(200);
    const before = await stats();
    const receiver = fakeOtlpReceiver(ENDPOINT);
    const sessions = [await conversation(false), await conversation(false), await conversation(false)];
    expect(receiver.exports).toHaveLength(0);
    await Promise.all(sessions.map(({ stub }) => drainExports(stub)));
    expect(receiver.exports).toHaveLength(1);
    const spans = spansOf(receiver.exports[0]!);
    const conversations = new Set(spans.map((s) => attr(s, GEN_AI.conversationId)));
    expect(conversations).toEqual(new Set(sessions.map((s) => s.id)));
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(3);
    for (const { stub } of sessions) expect(await exportRows(stub)).toBe(0);
    await advanceClock(sessions[0]!.stub, STATS_FLUSH_MS);
    await Promise.all(sessions.map(({ stub }) => drainExports(stub)));
    expect((await stats()).exported_spans).toBe(before.exported_spans + spans.length);
  });

  it("a partial success of a shared request is counted once, against the spans in the order sent", async () => {
    expect((await configure()).status).toBe(200);
    const before = await stats();
    const receiver = fakeOtlpReceiver(
      ENDPOINT,
      () => 200,
      () => ({ rejectedSpans: "5", errorMessage: "too many" }),
    );
    const sessions = [await conversation(false), await conversation(false)];
    await Promise.all(sessions.map(({ stub }) => drainExports(stub)));
    expect(receiver.exports).toHaveLength(1);
    const sent = spansOf(receiver.exports[0]!).length;
    for (const { stub } of sessions) expect(await exportRows(stub)).toBe(0);
    const after = await stats();
    expect(after.dropped_spans).toBe(before.dropped_spans + 5);
    expect(after.exported_spans).toBe(before.exported_spans + sent - 5);
    expect(after.last_error).toContain("too many");
    // Nothing is sent again.
    await Promise.all(sessions.map(({ stub }) => drainExports(stub)));
    expect(receiver.exports).toHaveLength(1);
  });

  it("a run in a caller's trace is exported in it: its top spans under the caller's, its calls' traceparent naming exported spans", async () => {
    expect((await configure()).status).toBe(200);
    const receiver = fakeOtlpReceiver(ENDPOINT);
    const toolHeaders: string[] = [];
    llmServer.use(
      http.post("https://tools.test/lookup", ({ request }) => {
        toolHeaders.push(request.headers.get("traceparent") ?? "");
        return HttpResponse.json({ status: "shipped" });
      }),
    );
    script({
      desk: [callTool("lookup_order", { order_id: "o-2" }), answer("Shipped.")],
    });
    const created = await call("POST", "/v1/sessions", { agent: "desk" });
    const id = created.json.id as string;
    const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
    const callerSpan = "00f067aa0ba902b7";
    const res = await call(
      "POST",
      `/v1/sessions/${id}/messages`,
      { role: "user", content: "where is o-2?" },
      {
        headers: { traceparent: `00-${callerTrace}-${callerSpan}-01` },
      },
    );
    expect(res.json.run).toMatchObject({ status: "completed", trace_id: callerTrace });
    await drainExports(sessionStub("alpha", id).stub);
    const spans = spansOf(receiver.exports.at(-1)!);
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([callerTrace]));
    const desk = spans.find((s) => s.name === SPAN_NAME.invokeAgent("desk"))!;
    expect(desk.parentSpanId).toBe(callerSpan);
    // The tool's request named the agent's turn: a span the collector has.
    expect(toolHeaders).toEqual([`00-${callerTrace}-${desk.spanId}-01`]);
  });

  it("the counters are written by the session's alarm a second after its export, with others held meanwhile", async () => {
    await configure();
    const before = await stats(); // a read writes what this isolate held
    const receiver = fakeOtlpReceiver(ENDPOINT);
    const { stub } = await conversation();
    const sent = spansOf(receiver.exports[0]!).length;
    // Held in the isolate, not yet in D1.
    expect((await getTelemetryStats(env.DB, "alpha")).exported_spans).toBe(before.exported_spans);
    await advanceClock(stub, STATS_FLUSH_MS);
    await drainExports(stub);
    expect((await getTelemetryStats(env.DB, "alpha")).exported_spans).toBe(before.exported_spans + sent);
  });

  it("a caller's trace that is not sampled is not exported", async () => {
    expect((await configure()).status).toBe(200);
    const receiver = fakeOtlpReceiver(ENDPOINT);
    script({ desk: [answer("Hello.")] });
    const id = (await call("POST", "/v1/sessions", { agent: "desk" })).json.id as string;
    const res = await call(
      "POST",
      `/v1/sessions/${id}/messages`,
      { role: "user", content: "hi" },
      {
        headers: { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4737-00f067aa0ba902b7-00" },
      },
    );
    expect(res.json.run.status).toBe("completed");
    const { stub } = sessionStub("alpha", id);
    await drainExports(stub);
    expect(receiver.exports).toHaveLength(0);
    expect(await exportRows(stub)).toBe(0);
  });

  it("a run that pauses sends its closed spans; its end sends only the rest, in the same trace", async () => {
    await configure();
    const receiver = fakeOtlpReceiver(ENDPOINT);
    script({ desk: [callTool("pick_date", {}), answer("Booked.")] });
    const id = (await call("POST", "/v1/sessions", { agent: "desk" })).json.id as string;
    const paused = await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "book me in" });
    expect(paused.json.run.status).toBe("requires_action");
    const { stub } = sessionStub("alpha", id);
    await drainExports(stub);
    expect(receiver.exports).toHaveLength(1);
    const first = spansOf(receiver.exports[0]!);
    // The agent's turn is still open: its chat span is sent, naming the turn's span as parent, but not the turn.
    expect(first.map((s) => s.name)).toContain(SPAN_NAME.chat("fake-model"));
    expect(first.map((s) => s.name)).not.toContain(SPAN_NAME.invokeAgent("desk"));
    expect(await exportRows(stub)).toBe(1);
    const call_id = paused.json.run.pending.tool_calls[0].id as string;
    const resumed = await call("POST", `/v1/sessions/${id}/tool-outputs`, {
      outputs: [{ tool_call_id: call_id, output: "the 3rd" }],
    });
    expect(resumed.json.run.status).toBe("completed");
    await drainExports(stub);
    expect(receiver.exports).toHaveLength(2);
    const second = spansOf(receiver.exports[1]!);
    const turn = second.find((s) => s.name === SPAN_NAME.invokeAgent("desk"))!;
    expect(first.find((s) => s.name === SPAN_NAME.chat("fake-model"))!.parentSpanId).toBe(turn.spanId);
    expect(second.map((s) => s.spanId).filter((sid) => first.some((s) => s.spanId === sid))).toEqual([]);
    expect(new Set([...first, ...second].map((s) => s.traceId)).size).toBe(1);
    expect(await exportRows(stub)).toBe(0);
  });

  it("with capture_content, tool arguments and handoff reasons are in the spans", async () => {
    await configure({ capture_content: true });
    const receiver = fakeOtlpReceiver(ENDPOINT);
    const { id } = await conversation();
    // This conversation's spans only: an export an earlier test's session sends late lands here too.
    const spans = receiver.accepted().filter((s) => attr(s, GEN_AI.conversationId) === id);
    const tool = spans.find((s) => s.name === SPAN_NAME.executeTool("lookup_order"))!;
    expect(JSON.parse(attr(tool, GEN_AI.toolCallArguments) as string)).toEqual({ order_id: "o-1" });
    expect(attr(spans.find((s) => s.name === SPAN_NAME.handoff)!, RELAY.handoffReason)).toBe("a refund");
    // The agents' turns carry the run's messages in the conventions' form.
    const turn = (agent: string) => spans.find((s) => s.name === SPAN_NAME.invokeAgent(agent))!;
    expect(JSON.parse(attr(turn("desk"), GEN_AI.inputMessages) as string)).toEqual([
      { role: "user", parts: [{ type: "text", content: "order o-1, please refund" }] },
    ]);
    expect(JSON.parse(attr(turn("billing"), GEN_AI.outputMessages) as string)).toEqual([
      { role: "assistant", parts: [{ type: "text", content: "Refunded." }], finish_reason: "stop" },
    ]);
    expect(attr(turn("desk"), GEN_AI.outputMessages)).toBeUndefined();
  });

  it("sample_ratio 0 sends nothing and queues nothing", async () => {
    await configure({ sample_ratio: 0 });
    const receiver = fakeOtlpReceiver(ENDPOINT);
    const { stub } = await conversation();
    expect(receiver.exports).toHaveLength(0);
    expect(await exportRows(stub)).toBe(0);
  });

  it("a 5xx is retried on the backoff, and the retry is sent", async () => {
    await configure();
    let answers = [503];
    const receiver = fakeOtlpReceiver(ENDPOINT, () => answers.shift() ?? 200);
    const { stub } = await conversation();
    expect(receiver.exports.map((e) => e.status)).toEqual([503]);
    expect(await exportRows(stub)).toBe(1);
    await advanceClock(stub, EXPORT_RETRY_DELAYS_MS[0]);
    await drainExports(stub);
    expect(receiver.exports.map((e) => e.status)).toEqual([503, 200]);
    expect(spansOf(receiver.exports[1]!)).toEqual(spansOf(receiver.exports[0]!));
    expect(await exportRows(stub)).toBe(0);
    answers = [];
  });

  it("a partial success counts the spans the collector rejected as dropped, with its message, and sends them no more", async () => {
    await configure();
    const before = await stats();
    const receiver = fakeOtlpReceiver(
      ENDPOINT,
      () => 200,
      () => ({ rejectedSpans: "2", errorMessage: "span name too long" }),
    );
    const { stub } = await conversation();
    expect(receiver.exports).toHaveLength(1);
    const sent = spansOf(receiver.exports[0]!).length;
    const after = await stats();
    expect(after.exported_spans).toBe(before.exported_spans + sent - 2);
    expect(after.dropped_spans).toBe(before.dropped_spans + 2);
    expect(after.last_error).toBe("the collector rejected 2 spans: span name too long");
    expect(await exportRows(stub)).toBe(0);
    await advanceClock(stub, 3_600_000);
    await drainExports(stub);
    expect(receiver.exports).toHaveLength(1);
  });

  it("a 4xx drops the export at once and counts its spans", async () => {
    await configure();
    const before = await stats();
    const receiver = fakeOtlpReceiver(ENDPOINT, () => 400);
    const { stub } = await conversation();
    expect(receiver.exports).toHaveLength(1);
    expect(await exportRows(stub)).toBe(0);
    const after = await stats();
    expect(after.dropped_spans).toBe(before.dropped_spans + spansOf(receiver.exports[0]!).length);
    expect(after.last_error).toBe("HTTP 400");
  });

  it("a receiver down past the retries: the export is dropped and counted, the run unaffected, the queue bounded", async () => {
    await configure();
    const before = await stats();
    const receiver = fakeOtlpReceiver(ENDPOINT, () => 503);
    const { id, stub } = await conversation();
    // More runs in the same session than its queue holds, while the receiver is down.
    for (let i = 0; i < MAX_QUEUED_EXPORTS + 3; i++) {
      script({ billing: [answer(`Answer ${i}.`)] });
      const res = await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: `again ${i}` });
      expect(res.json.run.status).toBe("completed");
      await drainExports(stub);
      expect(await exportRows(stub)).toBeLessThanOrEqual(MAX_QUEUED_EXPORTS);
    }
    for (const delay of EXPORT_RETRY_DELAYS_MS) {
      await advanceClock(stub, delay);
      await drainExports(stub);
    }
    expect(await exportRows(stub)).toBe(0);
    const after = await stats();
    expect(after.dropped_spans).toBeGreaterThan(before.dropped_spans);
    expect(after.exported_spans).toBe(before.exported_spans);
    expect(after.last_error).toMatch(/HTTP 503|overflowed/);
    // Nothing is tried again afterwards.
    const attempts = receiver.exports.length;
    await advanceClock(stub, 3_600_000);
    await drainExports(stub);
    expect(receiver.exports).toHaveLength(attempts);
    // The session goes on as before.
    script({ billing: [answer("Still here.")] });
    const res = await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "still there?" });
    expect(res.json.run).toMatchObject({ status: "completed", output: "Still here." });
  });
});
