import { describe, expect, it } from "vitest";
import { routeTraceEvent, traceEvent } from "../../src/runtime/run-record";
import type { TraceEvent } from "../../src/schemas/run";
import { type RunTraceInput, spansFromRun } from "../../src/telemetry/from-trace";
import { Span } from "../../src/telemetry/span";

const SESSION = `ses_${"a".repeat(52)}`;
const RUN = { id: `run_${"0".repeat(26)}_${SESSION}`, session_id: SESSION };
const T0 = Date.parse("2026-11-28T10:00:00.000Z");

/** A run as Relay records it: routed to triage, handed to billing, a lookup, an approved refund, a checked answer. */
function handedOffRun(): TraceEvent[] {
  let t = T0;
  const at = (ms: number) => (t += ms);
  return [
    routeTraceEvent(SESSION, "triage", at(0), { method: "rule", confidence: 0.92, latency_us: 180 }),
    traceEvent(RUN, "agent_start", "triage", at(1), { outcome: "run started" }),
    traceEvent(
      RUN,
      "llm_call",
      "triage",
      at(800),
      {
        executor: "model",
        model: "gpt-4o-mini",
        streamed: true,
        tokens: { prompt: 310, completion: 12, total: 322 },
      },
      800,
    ),
    traceEvent(RUN, "tool_call", "triage", at(0), { tool_name: "transfer_to_billing", tool_args: { reason: "x" } }),
    traceEvent(
      RUN,
      "handoff",
      "triage",
      at(5),
      {
        from_agent: "triage",
        to_agent: "billing",
        handoff_reason: "charged twice, mail ann@example.com",
        tool_name: "transfer_to_billing",
        outcome: "completed",
      },
      0,
    ),
    traceEvent(RUN, "agent_start", "billing", at(0), { from_agent: "triage", outcome: "handed the conversation" }),
    traceEvent(RUN, "compaction", "billing", at(2), {
      compaction: { id: "cmp_1", strategy: "trim", items: 4, tokens_before: 9000, tokens_after: 3000 },
    }),
    traceEvent(
      RUN,
      "llm_call",
      "billing",
      at(600),
      { executor: "model", model: "gpt-4o", tokens: { prompt: 500, completion: 40, total: 540 } },
      600,
    ),
    traceEvent(
      RUN,
      "tool_call",
      "billing",
      at(120),
      { tool_name: "lookup_invoice", tool_args: { invoice: "INV-7" }, outcome: "ok" },
      120,
    ),
    traceEvent(RUN, "tool_call", "billing", at(1), {
      tool_name: "refund",
      tool_args: { amount: 900 },
      outcome: "approval required",
    }),
    traceEvent(RUN, "tool_call", "billing", at(60_000), {
      tool_name: "refund",
      tool_args: { amount: 900 },
      outcome: "approved by ops@acme",
    }),
    traceEvent(
      RUN,
      "tool_call",
      "billing",
      at(90),
      { tool_name: "refund", tool_args: { amount: 900 }, outcome: "error" },
      90,
      "card 4111 1111 1111 1111 declined",
    ),
    traceEvent(RUN, "llm_call", "billing", at(400), { executor: "model", model: "gpt-4o" }, 400),
    traceEvent(RUN, "guardrail", "billing", at(0), { outcome: "passed" }),
    traceEvent(RUN, "agent_complete", "billing", at(0), { outcome: "final answer" }),
  ];
}

const input = (events: TraceEvent[], more: Partial<RunTraceInput> = {}): RunTraceInput => ({
  run_id: RUN.id,
  session_id: SESSION,
  events,
  settings: { capture_content: false },
  provider: "openai",
  tools: { lookup_invoice: "http", refund: "mcp", parcels: "mcp" },
  ...more,
});

const byName = (spans: Span[], name: string) => spans.filter((s) => s.name === name);

describe("spans from a run's trace", () => {
  it("makes one invoke_agent span per agent's turn, with the calls under it", () => {
    const { spans, open, trace_id } = spansFromRun(input(handedOffRun()));
    for (const s of spans) expect(Span.safeParse(s).success).toBe(true);
    expect(open).toEqual([]);
    const [triage] = byName(spans, "invoke_agent triage");
    const [billing] = byName(spans, "invoke_agent billing");
    expect(triage!.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "triage",
      "gen_ai.provider.name": "openai",
      "gen_ai.conversation.id": SESSION,
      "relay.agent.outcome": "handed_off",
    });
    expect(billing!.attributes["relay.agent.outcome"]).toBe("completed");
    expect(triage!.kind).toBe("internal");
    expect(triage!.parent_span_id).toBeNull();
    // The turn covers its calls: from agent_start to the handoff.
    expect(BigInt(triage!.end_ns) - BigInt(triage!.start_ns)).toBe(805_000_000n);
    for (const s of spans) expect(s.trace_id).toBe(trace_id);

    const [chat] = byName(spans, "chat gpt-4o-mini");
    expect(chat!.parent_span_id).toBe(triage!.span_id);
    expect(chat!.kind).toBe("client");
    expect(chat!.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "gpt-4o-mini",
      "gen_ai.usage.input_tokens": 310,
      "gen_ai.usage.output_tokens": 12,
      "gen_ai.request.stream": true,
      "relay.llm.streamed": true,
    });
    expect(BigInt(chat!.end_ns) - BigInt(chat!.start_ns)).toBe(800_000_000n);
    expect(byName(spans, "chat gpt-4o").every((s) => s.parent_span_id === billing!.span_id)).toBe(true);
  });

  it("links the handoff to the turn it started, and records route and compaction as Relay's spans", () => {
    const { spans } = spansFromRun(input(handedOffRun()));
    const [handoff] = byName(spans, "relay.handoff");
    const [triage] = byName(spans, "invoke_agent triage");
    const [billing] = byName(spans, "invoke_agent billing");
    // Under the call of the handoff tool that asked for it, an execute_tool span of the turn.
    const [asked] = byName(spans, "execute_tool transfer_to_billing");
    expect(asked!.parent_span_id).toBe(triage!.span_id);
    expect(asked!.attributes).toMatchObject({
      "relay.tool.kind": "handoff",
      "gen_ai.tool.name": "transfer_to_billing",
    });
    expect(handoff!.parent_span_id).toBe(asked!.span_id);
    expect(asked!.end_ns).toBe(handoff!.end_ns);
    expect(handoff!.attributes).toMatchObject({
      "relay.handoff.from": "triage",
      "relay.handoff.to": "billing",
      "relay.handoff.mode": "transfer",
      "relay.handoff.outcome": "completed",
    });
    expect(billing!.links).toEqual([{ trace_id: handoff!.trace_id, span_id: handoff!.span_id, attributes: {} }]);
    const [route] = byName(spans, "relay.route");
    expect(route!.attributes).toMatchObject({
      "relay.route.method": "rule",
      "relay.route.agent": "triage",
      "relay.route.confidence": { double: 0.92 },
    });
    const [compaction] = byName(spans, "relay.compaction");
    expect(compaction!.parent_span_id).toBe(billing!.span_id);
    expect(compaction!.attributes).toMatchObject({ "relay.compaction.strategy": "trim", "relay.compaction.items": 4 });
  });

  it("maps tools by kind, approval waits to spans, guardrail results to events, and failures to error statuses", () => {
    const { spans } = spansFromRun(input(handedOffRun()));
    const [lookup] = byName(spans, "execute_tool lookup_invoice");
    expect(lookup!.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "lookup_invoice",
      "gen_ai.tool.type": "extension",
      "relay.tool.kind": "http",
    });
    expect(lookup!.status).toEqual({ code: "unset" });
    const refunds = byName(spans, "execute_tool refund");
    expect(refunds).toHaveLength(1);
    expect(refunds[0]!.attributes).toMatchObject({ "relay.tool.kind": "mcp", "error.type": "tool_error" });
    expect(refunds[0]!.status).toEqual({ code: "error" });
    const [billing] = byName(spans, "invoke_agent billing");
    // The wait is a span under the turn that asked: from the request to the decision (a minute).
    const [approval] = byName(spans, "relay.approval");
    expect(approval!.parent_span_id).toBe(billing!.span_id);
    expect(approval!.attributes).toMatchObject({ "gen_ai.tool.name": "refund", "relay.approval.outcome": "approved" });
    expect(BigInt(approval!.end_ns) - BigInt(approval!.start_ns)).toBe(60_000_000_000n);
    expect(billing!.events.map((e) => e.name)).toEqual(["gen_ai.guardrail.result"]);
    expect(billing!.events[0]!.attributes).toMatchObject({
      "gen_ai.guardrail.result.type": "outcome",
      "gen_ai.guardrail.result.value": "passed",
    });
  });

  it("knows an MCP server's tool by its registry tool's prefix", () => {
    const events = [
      traceEvent(RUN, "agent_start", "desk", T0, {}),
      traceEvent(RUN, "tool_call", "desk", T0 + 9, { tool_name: "parcels__track_parcel", outcome: "ok" }, 9),
      traceEvent(RUN, "tool_call", "desk", T0 + 9, { tool_name: "other__track_parcel", outcome: "ok" }, 9),
    ];
    const { spans } = spansFromRun(input(events));
    expect(byName(spans, "execute_tool parcels__track_parcel")[0]!.attributes["relay.tool.kind"]).toBe("mcp");
    expect(byName(spans, "execute_tool other__track_parcel")[0]!.attributes["relay.tool.kind"]).toBe("builtin");
  });

  it("puts a run an A2A request started under its server span, from the route to the run's last event", () => {
    const events = handedOffRun();
    const parent = { trace_id: "4bf92f3577b34da6a3ce929d0e0e4736", span_id: "00f067aa0ba902b7" };
    const a2a = { method: "SendMessage", message_id: "m-1", state: "TASK_STATE_COMPLETED" };
    const { spans } = spansFromRun(input(events, { parent, a2a }));
    const [server] = byName(spans, "SendMessage");
    expect(server).toMatchObject({ kind: "server", parent_span_id: parent.span_id });
    expect(server!.attributes).toMatchObject({
      "a2a.method.name": "SendMessage",
      "a2a.task.id": RUN.id,
      "a2a.task.state": "TASK_STATE_COMPLETED",
      "a2a.message.id": "m-1",
      "gen_ai.conversation.id": SESSION,
    });
    const top = spans.filter((s) => s.parent_span_id === server!.span_id).map((s) => s.name);
    expect(top).toEqual(["relay.route", "invoke_agent triage", "invoke_agent billing"]);
    expect(server!.start_ns).toBe(spans.find((s) => s.name === "relay.route")!.start_ns);
    expect(server!.end_ns).toBe(byName(spans, "invoke_agent billing")[0]!.end_ns);
    // The other spans keep their ids: the calls' traceparent named them before the server span existed.
    const plain = spansFromRun(input(events, { parent }));
    expect(spans.filter((s) => s !== server).map((s) => s.span_id)).toEqual(plain.spans.map((s) => s.span_id));
  });

  it("leaves an approval still waiting out, and names a denial", () => {
    const events = handedOffRun();
    const asked = events.findIndex((e) => e.details.outcome === "approval required");
    const waiting = spansFromRun(input(events.slice(0, asked + 1)));
    expect(byName(waiting.spans, "relay.approval")).toEqual([]);
    const denied = traceEvent(RUN, "tool_call", "billing", T0 + 99_000, {
      tool_name: "refund",
      outcome: "denied by ops@acme",
    });
    const decided = spansFromRun(input([...events.slice(0, asked + 1), denied]));
    expect(byName(decided.spans, "relay.approval")[0]!.attributes["relay.approval.outcome"]).toBe("denied");
  });

  it("marks agent-to-agent calls with their collaboration, action and the agent addressed", () => {
    const ask = traceEvent(
      RUN,
      "tool_call",
      "triage",
      T0 + 50,
      { tool_name: "ask_agent", tool_args: { agent: "billing", question: "balance?" }, outcome: "ok" },
      40,
    );
    const { spans } = spansFromRun(
      input([traceEvent(RUN, "agent_start", "triage", T0, {}), ask], {
        tools: { ask_agent: { kind: "peer", action: "ask" } },
        collaboration_id: "col_1",
      }),
    );
    expect(byName(spans, "execute_tool ask_agent")[0]!.attributes).toMatchObject({
      "relay.tool.kind": "peer",
      "relay.collaboration.id": "col_1",
      "relay.collaboration.action": "ask",
      "relay.collaboration.to": "billing",
    });
  });

  it("keeps content out unless the tenant turns capture on, and masks PII in what it captures", () => {
    const off = JSON.stringify(spansFromRun(input(handedOffRun())).spans);
    expect(off).not.toContain("4111");
    expect(off).not.toContain("example.com");
    expect(off).not.toContain("gen_ai.tool.call.arguments");
    expect(off).not.toContain("INV-7");

    const on = spansFromRun(input(handedOffRun(), { settings: { capture_content: true } })).spans;
    const [lookup] = byName(on, "execute_tool lookup_invoice");
    expect(lookup!.attributes["gen_ai.tool.call.arguments"]).toBe('{"invoice":"INV-7"}');
    const [refund] = byName(on, "execute_tool refund");
    expect(refund!.status).toEqual({ code: "error", message: "card [REDACTED_CARD] declined" });
    expect(byName(on, "relay.handoff")[0]!.attributes["relay.handoff.reason"]).toBe(
      "charged twice, mail [REDACTED_EMAIL]",
    );
    expect(JSON.stringify(on)).not.toContain("4111");
  });

  it("puts a turn's messages on its span only with capture on, PII-masked and cut to size", () => {
    const iso = (ms: number) => new Date(ms).toISOString();
    const messages = [
      { role: "user" as const, content: "I was charged twice, call me on 555-123-4567", created_at: iso(T0 + 1) },
      { role: "assistant" as const, agent: "triage", content: "", tool_calls: [], created_at: iso(T0 + 801) },
      { role: "assistant" as const, agent: "billing", content: "x".repeat(20_000), created_at: iso(T0 + 1700) },
    ];
    const off = spansFromRun(input(handedOffRun(), { messages })).spans;
    expect(JSON.stringify(off)).not.toContain("charged twice");
    const on = spansFromRun(input(handedOffRun(), { messages, settings: { capture_content: true } })).spans;
    const [triage] = byName(on, "invoke_agent triage");
    expect(JSON.parse(triage!.attributes["gen_ai.input.messages"] as string)).toEqual([
      { role: "user", parts: [{ type: "text", content: "I was charged twice, call me on [REDACTED_PHONE]" }] },
    ]);
    expect(triage!.attributes["gen_ai.output.messages"]).toBeUndefined();
    const [billing] = byName(on, "invoke_agent billing");
    const [answer] = JSON.parse(billing!.attributes["gen_ai.output.messages"] as string);
    expect(answer.finish_reason).toBe("stop");
    expect(answer.parts[0].content).toHaveLength(8 * 1024 + "…[cut]".length);
  });

  it("gives the same ids every time, and continues the caller's trace under its span", () => {
    const events = handedOffRun();
    const first = spansFromRun(input(events));
    expect(spansFromRun(input(events))).toEqual(first);
    const parent = { trace_id: "4bf92f3577b34da6a3ce929d0e0e4736", span_id: "00f067aa0ba902b7" };
    const under = spansFromRun(input(events, { parent }));
    expect(under.trace_id).toBe(parent.trace_id);
    const top = under.spans.filter((s) => s.parent_span_id === parent.span_id).map((s) => s.name);
    expect(top).toEqual(["relay.route", "invoke_agent triage", "invoke_agent billing"]);
    expect(new Set(under.spans.map((s) => s.span_id)).size).toBe(under.spans.length);
  });

  it("leaves a waiting turn open, its children exported under its id", () => {
    const start = traceEvent(RUN, "agent_start", "supervisor", T0, {
      executor: "human",
      outcome: "waiting for a person",
    });
    const waiting = spansFromRun(input([start]));
    expect(waiting.spans).toEqual([]);
    expect(waiting.open).toHaveLength(1);
    const done = traceEvent(RUN, "agent_complete", "supervisor", T0 + 90_000, {
      executor: "human",
      outcome: "answered from the inbox",
    });
    const answered = spansFromRun(input([start, done]));
    expect(answered.open).toEqual([]);
    expect(answered.spans[0]!.span_id).toBe(waiting.open[0]);
    expect(answered.spans[0]!.attributes["gen_ai.provider.name"]).toBe("relay.human");
    expect(answered.spans[0]!.events.map((e) => e.name)).toEqual(["relay.human_turn.requested"]);
  });

  it("fails the turn and its model call on agent_error, and names a webhook's answer as another agent's", () => {
    const failed = spansFromRun(
      input([
        traceEvent(RUN, "agent_start", "triage", T0, { outcome: "run started" }),
        traceEvent(
          RUN,
          "agent_error",
          "triage",
          T0 + 30_000,
          { executor: "model", model: "gpt-4o" },
          30_000,
          "PROVIDER_TIMEOUT",
        ),
      ]),
    ).spans;
    expect(failed.map((s) => [s.name, s.status.code, s.attributes["error.type"]])).toEqual([
      ["chat gpt-4o", "error", "PROVIDER_TIMEOUT"],
      ["invoke_agent triage", "error", "PROVIDER_TIMEOUT"],
    ]);
    const hook = spansFromRun(
      input([
        traceEvent(RUN, "agent_start", "desk", T0, { outcome: "run started" }),
        traceEvent(RUN, "llm_call", "desk", T0 + 200, { executor: "webhook", model: "webhook" }, 200),
        traceEvent(RUN, "agent_complete", "desk", T0 + 200, { outcome: "final answer" }),
      ]),
    ).spans;
    expect(hook[0]).toMatchObject({
      name: "invoke_agent desk",
      kind: "client",
      attributes: { "gen_ai.provider.name": "relay.webhook", "gen_ai.operation.name": "invoke_agent" },
    });
    expect(hook[1]!.attributes["gen_ai.provider.name"]).toBe("relay.webhook");
  });

  it("ignores other runs' events and closes a turn a restart cut off", () => {
    const other = { id: `run_${"1".repeat(26)}_${SESSION}`, session_id: SESSION };
    const spans = spansFromRun(
      input([
        traceEvent(other, "agent_start", "triage", T0, { outcome: "run started" }),
        traceEvent(RUN, "agent_start", "triage", T0 + 1, { outcome: "run started" }),
        traceEvent(RUN, "agent_start", "triage", T0 + 9000, { outcome: "resumed after a restart (turn)" }),
        traceEvent(RUN, "tool_call", "triage", T0 + 9000, { tool_name: "ask_agent", outcome: "interrupted" }, 0, "x"),
        traceEvent(RUN, "agent_complete", "triage", T0 + 9500, { outcome: "final answer" }),
      ]),
    ).spans;
    expect(spans.map((s) => [s.name, s.attributes["relay.agent.outcome"] ?? s.attributes["error.type"]])).toEqual([
      ["invoke_agent triage", "interrupted"],
      ["execute_tool ask_agent", "interrupted"],
      ["invoke_agent triage", "completed"],
    ]);
    expect(spans[1]!.attributes["relay.tool.kind"]).toBe("builtin");
  });
});
