import { beforeAll, describe, expect, it } from "vitest";
import { derivedSpanId, derivedTraceId } from "../../src/telemetry/span-ids";
import { parseTraceparent } from "../../src/telemetry/trace-context";
import { advanceClock, drainDue, sessionStub } from "../durable-objects/helpers";
import { answer, callTool } from "../fakes/openai";
import { llmServer } from "../fakes/server";
import { fakeWebhookAgent, replyText, type WebhookDelivery } from "../fakes/webhook-agent";
import { call, newSession, putAgents } from "./helpers";
import { script } from "./run-fixtures";

/**
 * Webhooks out in a run's trace (docs/observability.md, Propagation): a delivery of a record
 * a run wrote carries the run's `traceparent` and `tracestate` — the span of the agent's turn
 * that wrote it, or the caller's span for the run's start and end — beside the Standard
 * Webhooks signature, which the receiver (the reference `standardwebhooks` package) still
 * verifies; a record no run wrote carries none. Sessions, storage and timers are real.
 */

const URL = "https://receiver.test/traced-events";
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE}-${CALLER_SPAN}-01`;

const AGENTS = [
  {
    name: "desk",
    description: "Front desk",
    handoffs: ["billing"],
    tools: { allow: ["refund"], confirmation: { require: ["refund"], timeout_s: 60 } },
  },
  { name: "billing", description: "Billing" },
];

beforeAll(async () => {
  await putAgents(AGENTS);
  const tool = await call("PUT", "/v1/tools/refund", {
    name: "refund",
    kind: "http",
    url: "https://tools.test/refund",
  });
  if (tool.status !== 201) throw new Error(JSON.stringify(tool.json));
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
});

/** Subscribes the tenant to every handoff and run record; a receiver holding the secret, failing `fail` times first. */
async function receiver(fail = 0) {
  const { secret } = (await call("PUT", "/v1/config/events", { url: URL, types: ["handoff.*", "run.*"] })).json;
  let failures = fail;
  const fake = fakeWebhookAgent({
    url: URL,
    secret,
    respond: () => (failures-- > 0 ? replyText("down", 500) : replyText("", 204)),
  });
  llmServer.use(fake.handler);
  return fake;
}

const say = (id: string, content: string, headers: Record<string, string> = {}) =>
  call("POST", `/v1/sessions/${id}/messages`, { role: "user", content }, { headers });

/** Each delivery's type with its traceparent (parsed) and tracestate, in record order (sent in parallel). */
function traced(deliveries: WebhookDelivery[]) {
  const byId = (d: WebhookDelivery) => d.headers["webhook-id"]!;
  return [...deliveries]
    .sort((a, b) => byId(a).localeCompare(byId(b)))
    .map((d) => ({
      type: (d.body as { type: string }).type,
      parent: d.headers.traceparent === undefined ? null : parseTraceparent(d.headers.traceparent),
      tracestate: d.headers.tracestate ?? null,
    }));
}

/** The span id spansFromRun gives the turn its `agent_start` event `n` (of the run's) begins. */
function turnSpan(run: { trace_id: string; events: { event_id: string; event_type: string }[] }, n = 0): string {
  const start = run.events.filter((e) => e.event_type === "agent_start")[n]!;
  return derivedSpanId(run.trace_id, start.event_id, "turn");
}

describe("a run's records", () => {
  it("carry the caller's trace: the handoff the turn made its span, the run's start and end the caller's; signed as ever", async () => {
    const fake = await receiver();
    script({ desk: [callTool("transfer_to_billing", { reason: "billing question" })], billing: [answer("Done.")] });
    const id = await newSession("desk");
    const res = await say(id, "charged twice", { traceparent: TRACEPARENT, tracestate: "vendor=abc, other=1" });
    const run = res.json.run;
    expect(run).toMatchObject({ status: "completed", trace_id: TRACE });
    await drainDue(sessionStub("alpha", id).stub);
    const desk = { trace_id: TRACE, span_id: turnSpan(run, 0), sampled: true };
    const caller = { trace_id: TRACE, span_id: CALLER_SPAN, sampled: true };
    const sent = traced(fake.deliveries);
    const audit = (await call("GET", `/v1/sessions/${id}/audit?limit=200`)).json.items
      .map((r: { action: string }) => r.action)
      .filter((action: string) => action.startsWith("handoff.") || action.startsWith("run."));
    expect(sent.map((d) => d.type)).toEqual(audit);
    expect(audit).toEqual(expect.arrayContaining(["run.started", "handoff.initiated", "handoff.completed"]));
    expect(audit.at(-1)).toBe("run.completed");
    for (const d of sent) {
      expect(d.parent, d.type).toEqual(d.type.startsWith("handoff.") ? desk : caller);
      expect(d.tracestate, d.type).toBe("vendor=abc,other=1");
    }
    // Not the turn billing took after the handoff: the handoff was desk's.
    expect(desk.span_id).not.toBe(turnSpan(run, 1));
    // The signature covers id, timestamp and body, and still verifies; the trace is in no body.
    expect(fake.deliveries.every((d) => d.verified === true)).toBe(true);
    expect(fake.deliveries.some((d) => d.text.includes(TRACE))).toBe(false);
  });

  it("a paused run's records name the turn that paused and resumed; a retry sends the same trace again", async () => {
    const fake = await receiver(1);
    const refund = fakeWebhookAgent({ url: "https://tools.test/refund", respond: () => replyText("refunded") });
    llmServer.use(refund.handler);
    script({ desk: [callTool("refund", { order_id: "o-1" }), answer("Refunded.")] });
    const id = await newSession("desk");
    const { stub } = sessionStub("alpha", id);
    const paused = (await say(id, "refund o-1", { traceparent: `00-${TRACE}-${CALLER_SPAN}-00` })).json.run;
    expect(paused.status).toBe("awaiting_approval");
    const item = (await call("GET", `/v1/sessions/${id}/inbox`)).json.items.find(
      (i: { kind: string }) => i.kind === "approval",
    );
    const done = (await call("POST", `/v1/inbox/${item.id}/resolve`, { decision: "approve", by: "ops" })).json.run;
    expect(done.status).toBe("completed");
    await drainDue(stub);
    await advanceClock(stub, 5_000);
    await drainDue(stub);
    const turn = { trace_id: TRACE, span_id: turnSpan(done), sampled: false };
    const caller = { trace_id: TRACE, span_id: CALLER_SPAN, sampled: false };
    const firsts = new Map<string, ReturnType<typeof traced>[number]>();
    for (const d of traced(fake.deliveries)) {
      const seen = firsts.get(d.type);
      // A retry of one record (the receiver failed once) repeats its trace.
      if (seen) expect(d, `${d.type} again`).toEqual(seen);
      firsts.set(d.type, d);
    }
    expect(fake.deliveries.length).toBeGreaterThan(firsts.size);
    expect(Object.fromEntries([...firsts].map(([type, d]) => [type, d.parent]))).toEqual({
      "run.started": caller,
      "run.paused": turn,
      "run.resumed": turn,
      "run.completed": caller,
    });
    expect(fake.deliveries.every((d) => d.verified === true)).toBe(true);
  });

  it("a run in its own trace: the derived trace id, no tracestate, outside a turn the span derived from the run", async () => {
    const fake = await receiver();
    script({ billing: [answer("Done.")] });
    const id = await newSession("billing");
    const run = (await say(id, "hello")).json.run;
    await drainDue(sessionStub("alpha", id).stub);
    const own = derivedTraceId("relay.run", run.id);
    expect(run.trace_id).toBe(own);
    expect(traced(fake.deliveries)).toEqual([
      {
        type: "run.started",
        parent: { trace_id: own, span_id: derivedSpanId(own, run.id, "run"), sampled: true },
        tracestate: null,
      },
      {
        type: "run.completed",
        parent: { trace_id: own, span_id: derivedSpanId(own, run.id, "run"), sampled: true },
        tracestate: null,
      },
    ]);
  });
});

describe("records no run wrote", () => {
  it("a handoff through the API carries no trace, whatever its request carried", async () => {
    const fake = await receiver();
    const id = await newSession("desk");
    const res = await call(
      "POST",
      "/v1/handoffs",
      { session_id: id, source_agent: "desk", target_agent: "billing", reason: "by hand" },
      { headers: { traceparent: TRACEPARENT } },
    );
    expect(res.status).toBe(200);
    await drainDue(sessionStub("alpha", id).stub);
    expect(fake.deliveries.map((d) => (d.body as { type: string }).type)).toContain("handoff.completed");
    for (const d of fake.deliveries) {
      expect(d.headers.traceparent).toBeUndefined();
      expect(d.headers.tracestate).toBeUndefined();
      expect(d.verified).toBe(true);
    }
  });
});
