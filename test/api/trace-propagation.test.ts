import { beforeAll, describe, expect, it } from "vitest";
import { derivedSpanId, derivedTraceId } from "../../src/telemetry/span-ids";
import { parseTraceparent } from "../../src/telemetry/trace-context";
import { eventually } from "../eventually";
import { fakeA2aAgent } from "../fakes/a2a-agent";
import { fakeMcpServer } from "../fakes/mcp-server";
import { answer, callTool } from "../fakes/openai";
import { llmServer } from "../fakes/server";
import { fakeWebhookAgent, replyOutput, replyText, replyToolCalls } from "../fakes/webhook-agent";
import { post, userMessage } from "./a2a-rpc";
import { call, newSession, putAgents, putSecret } from "./helpers";
import { envelope, MODERN, post as mcpPost } from "./mcp-rpc";
import { script } from "./run-fixtures";

/**
 * W3C trace context through a run (docs/observability.md, Propagation): the `traceparent` of
 * the request that starts a run is the run's trace, shown as its `trace_id` and sent on every
 * outbound call of the run — the webhook agent, http and MCP tools, a remote A2A agent, the
 * model provider — with the span id of the agent's turn the call belongs to. The outside
 * world is faked at the fetch boundary; sessions, storage and timers are real.
 */

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE}-${CALLER_SPAN}-01`;

const AGENTS = [
  { name: "hook", kind: "webhook", endpoint: "https://hook.test/agent", tools: { allow: ["lookup"] } },
  {
    name: "desk",
    description: "Front desk",
    handoffs: ["helper"],
    tools: { allow: ["refund"], confirmation: { require: ["refund"], timeout_s: 60 } },
  },
  { name: "clerk", description: "Orders", tools: { allow: ["orders"] } },
  { name: "helper", kind: "a2a", card_url: "https://helper.test/.well-known/agent-card.json" },
];

const TOOLS = [
  { name: "lookup", kind: "http", url: "https://tools.test/lookup", headers: { traceparent: "fake-traceparent" } },
  { name: "refund", kind: "http", url: "https://tools.test/refund" },
  { name: "orders", kind: "mcp", url: "https://mcp.test/orders", timeout_s: 5 },
];

beforeAll(async () => {
  // A tenant's header under Relay's name: Relay's own is sent instead.
  await putSecret("fake-traceparent", `00-${"f".repeat(32)}-${"e".repeat(16)}-01`);
  for (const tool of TOOLS) {
    const res = await call("PUT", `/v1/tools/${tool.name}`, tool);
    if (res.status !== 201) throw new Error(`PUT tool ${tool.name}: ${JSON.stringify(res.json)}`);
  }
  await putAgents(AGENTS);
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
});

const say = (id: string, content: string, headers: Record<string, string> = {}) =>
  call("POST", `/v1/sessions/${id}/messages`, { role: "user", content }, { headers });

/** A header's traceparent, parsed (it must be a valid one). */
function parent(headers: Record<string, string>) {
  const parsed = parseTraceparent(headers.traceparent);
  expect(parsed, `traceparent ${headers.traceparent}`).not.toBeNull();
  return parsed!;
}

/** The span id spansFromRun gives the turn its `agent_start` event `n` (of the run's) begins. */
function turnSpan(run: { trace_id: string; events: { event_id: string; event_type: string }[] }, n = 0): string {
  const start = run.events.filter((e) => e.event_type === "agent_start")[n]!;
  return derivedSpanId(run.trace_id, start.event_id, "turn");
}

describe("a run in the caller's trace", () => {
  it("a webhook agent gets the caller's trace id, tracestate and the turn's span; the run shows the trace_id", async () => {
    const hook = fakeWebhookAgent({ url: "https://hook.test/agent", respond: () => replyOutput("done") });
    llmServer.use(hook.handler);
    const id = await newSession("hook");
    const res = await say(id, "hello", { traceparent: TRACEPARENT, tracestate: "vendor=abc, other=1" });
    expect(res.status).toBe(200);
    const run = res.json.run;
    expect(run).toMatchObject({ status: "completed", trace_id: TRACE });
    const sent = parent(hook.deliveries[0]!.headers);
    expect(sent).toEqual({ trace_id: TRACE, span_id: turnSpan(run), sampled: true });
    expect(sent.span_id).not.toBe(CALLER_SPAN);
    expect(hook.deliveries[0]!.headers.tracestate).toBe("vendor=abc,other=1");
    // The run's read view says the same.
    expect((await call("GET", `/v1/sessions/${id}/runs/${run.id}`)).json.trace_id).toBe(TRACE);
  });

  it("without a traceparent the run's trace is its own (derived from its id), and the webhook sees it", async () => {
    const hook = fakeWebhookAgent({ url: "https://hook.test/agent", respond: () => replyOutput("done") });
    llmServer.use(hook.handler);
    const id = await newSession("hook");
    const run = (await say(id, "hello")).json.run;
    expect(run.trace_id).toBe(derivedTraceId("relay.run", run.id));
    expect(run.trace_id).not.toBe(TRACE);
    expect(parent(hook.deliveries[0]!.headers)).toMatchObject({ trace_id: run.trace_id, span_id: turnSpan(run) });
    expect(hook.deliveries[0]!.headers.tracestate).toBeUndefined();
  });

  it("a malformed traceparent is ignored: no error, a fresh trace, and its tracestate is not sent", async () => {
    for (const bad of [
      `00-${TRACE.toUpperCase()}-${CALLER_SPAN}-01`,
      `00-${"0".repeat(32)}-${CALLER_SPAN}-01`,
      "junk",
    ]) {
      const hook = fakeWebhookAgent({ url: "https://hook.test/agent", respond: () => replyOutput("done") });
      llmServer.use(hook.handler);
      const id = await newSession("hook");
      const res = await say(id, "hello", { traceparent: bad, tracestate: "vendor=abc" });
      expect(res.status, bad).toBe(200);
      expect(res.json.run.trace_id, bad).toBe(derivedTraceId("relay.run", res.json.run.id));
      expect(parent(hook.deliveries[0]!.headers).trace_id, bad).toBe(res.json.run.trace_id);
      expect(hook.deliveries[0]!.headers.tracestate, bad).toBeUndefined();
    }
  });

  it("an http tool gets the run's trace; a tenant's header named traceparent does not replace Relay's", async () => {
    const tool = fakeWebhookAgent({ url: "https://tools.test/lookup", respond: () => replyText("found") });
    const hook = fakeWebhookAgent({
      url: "https://hook.test/agent",
      respond: (d) =>
        (d.body as { data: { messages: { role: string }[] } }).data.messages.some((m) => m.role === "tool")
          ? replyOutput("looked up")
          : replyToolCalls([{ name: "lookup", arguments: {} }]),
    });
    llmServer.use(hook.handler, tool.handler);
    const id = await newSession("hook");
    const run = (await say(id, "look it up", { traceparent: TRACEPARENT })).json.run;
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    expect(tool.deliveries).toHaveLength(1);
    expect(parent(tool.deliveries[0]!.headers)).toEqual({ trace_id: TRACE, span_id: turnSpan(run), sampled: true });
    // Both turns of the webhook and the tool call between them are in one agent turn: one span.
    expect(hook.deliveries.map((d) => parent(d.headers).span_id)).toEqual([turnSpan(run), turnSpan(run)]);
  });
});

describe("a paused run keeps its trace", () => {
  it("an approval's resume sends the same trace on the tool call and the model call after it", async () => {
    const refund = fakeWebhookAgent({ url: "https://tools.test/refund", respond: () => replyText("refunded") });
    llmServer.use(refund.handler);
    const model = script({ desk: [callTool("refund", { order_id: "o-1" }), answer("Refunded.")] });
    const id = await newSession("desk");
    const paused = (await say(id, "refund o-1", { traceparent: TRACEPARENT })).json.run;
    expect(paused).toMatchObject({ status: "awaiting_approval", trace_id: TRACE });
    const items = (await call("GET", `/v1/sessions/${id}/inbox`)).json.items;
    const item = items.find((i: { kind: string }) => i.kind === "approval");
    const approved = await call("POST", `/v1/inbox/${item.id}/resolve`, { decision: "approve", by: "ops" });
    expect(approved.json.run).toMatchObject({ status: "completed", trace_id: TRACE });
    const span = turnSpan(approved.json.run);
    expect(parent(refund.deliveries[0]!.headers)).toEqual({ trace_id: TRACE, span_id: span, sampled: true });
    // The model provider: before the pause and after the resume, the same trace and turn.
    expect(model.requests.map((r) => parent(r.headers))).toEqual([
      { trace_id: TRACE, span_id: span, sampled: true },
      { trace_id: TRACE, span_id: span, sampled: true },
    ]);
  });
});

describe("MCP tools and remote agents", () => {
  it("an MCP tool call carries the run's trace", async () => {
    const server = fakeMcpServer("https://mcp.test/orders");
    llmServer.use(server.handler);
    script({ clerk: [callTool("orders__echo", { text: "hi" }), answer("Echoed.")] });
    const id = await newSession("clerk");
    const run = (await say(id, "echo hi", { traceparent: TRACEPARENT })).json.run;
    expect(run.status).toBe("completed");
    expect(server.calls).toHaveLength(1);
    expect(parent(server.calls[0]!.headers)).toEqual({ trace_id: TRACE, span_id: turnSpan(run), sampled: true });
  });

  it("a remote A2A agent gets the run's trace with its own turn's span, not the agent's before it", async () => {
    const remote = fakeA2aAgent("https://helper.test", [{ kind: "answer", text: "Helped." }]);
    llmServer.use(...remote.handlers);
    const model = script({ desk: [callTool("transfer_to_helper", { reason: "remote" })] });
    const id = await newSession("desk");
    const run = (await say(id, "help", { traceparent: `00-${TRACE}-${CALLER_SPAN}-00` })).json.run;
    expect(run).toMatchObject({ status: "completed", trace_id: TRACE });
    const remoteSent = parent(remote.received[0]!.headers);
    const modelSent = parent(model.requests[0]!.headers);
    // One trace, not sampled as the caller said; two turns, two spans.
    expect(remoteSent).toEqual({ trace_id: TRACE, span_id: turnSpan(run, 1), sampled: false });
    expect(modelSent).toEqual({ trace_id: TRACE, span_id: turnSpan(run, 0), sampled: false });
    expect(remoteSent.span_id).not.toBe(modelSent.span_id);
  });
});

describe("the other ways a run starts", () => {
  it("A2A SendMessage and SendStreamingMessage: the run is in the request's trace", async () => {
    for (const method of ["SendMessage", "SendStreamingMessage"]) {
      const hook = fakeWebhookAgent({ url: "https://hook.test/agent", respond: () => replyOutput("done") });
      llmServer.use(hook.handler);
      const res = await post("/a2a/hook", method, userMessage("hello"), { headers: { traceparent: TRACEPARENT } });
      expect(res.status, method).toBe(200);
      await res.text();
      await eventually(
        async () => hook.deliveries.length,
        (n) => n === 1,
        { timeout: 5_000, what: `${method}: the webhook agent's delivery` },
      );
      expect(parent(hook.deliveries[0]!.headers).trace_id, method).toBe(TRACE);
    }
  });

  it("MCP send_message: the run is in the /mcp request's trace", async () => {
    const hook = fakeWebhookAgent({ url: "https://hook.test/agent", respond: () => replyOutput("done") });
    llmServer.use(hook.handler);
    const params = { name: "send_message", arguments: { agent: "hook", content: "hello" }, _meta: envelope() };
    const answer = await mcpPost(
      { jsonrpc: "2.0", id: 1, method: "tools/call", params },
      {
        headers: {
          "MCP-Protocol-Version": MODERN,
          "Mcp-Method": "tools/call",
          "Mcp-Name": "send_message",
          traceparent: TRACEPARENT,
        },
      },
    );
    expect(answer.response?.error).toBeUndefined();
    expect(answer.response?.result.structuredContent).toMatchObject({ status: "completed" });
    expect(parent(hook.deliveries[0]!.headers).trace_id).toBe(TRACE);
  });
});
