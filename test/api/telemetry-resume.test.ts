import { HttpResponse, http } from "msw";
import { beforeAll, describe, expect, it } from "vitest";
import { RELAY, SPAN_NAME } from "../../src/telemetry/semconv";
import { drainExports, sessionStub } from "../durable-objects/helpers";
import { answer, callTool } from "../fakes/openai";
import { fakeOtlpReceiver, spansOf } from "../fakes/otlp-receiver";
import { llmServer } from "../fakes/server";
import { call, newSession, putAgents } from "./helpers";
import { script } from "./run-fixtures";

/**
 * A paused run resumed by a request in another trace (docs/observability.md, Resumed runs):
 * the run goes on in its own trace, and the step the request caused links to the request's
 * span — an approval's decision, the client's tool outputs, a person's answer. The collector
 * is faked at the fetch boundary; sessions, storage, timers and D1 are real.
 */

const ENDPOINT = "https://otel-resume.test/v1/traces";
const RESUMER_TRACE = "7bf92f3577b34da6a3ce929d0e0e4736";
const RESUMER_SPAN = "20f067aa0ba902b7";
const RESUMER = { traceparent: `00-${RESUMER_TRACE}-${RESUMER_SPAN}-01` };
const LINK = { trace_id: RESUMER_TRACE, span_id: RESUMER_SPAN, attributes: { [RELAY.linkKind]: "resumed_by" } };

const AGENTS = [
  { name: "planner", description: "Plans", tools: { allow: ["pick_slot"] } },
  { name: "payer", description: "Pays", tools: { allow: ["wire"], confirmation: { require: ["wire"] } } },
  { name: "clerk", kind: "human", description: "A person" },
];

beforeAll(async () => {
  await call("PUT", "/v1/tools/pick_slot", { name: "pick_slot", kind: "client", description: "Picks a slot" });
  await call("PUT", "/v1/tools/wire", { name: "wire", kind: "http", url: "https://tools.test/wire" });
  await putAgents(AGENTS);
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
  const res = await call("PUT", "/v1/config/telemetry", { endpoint: ENDPOINT });
  if (res.status !== 200) throw new Error(JSON.stringify(res.json));
});

/** The run's spans as the collector got them (every export), after the session's alarms ran. */
async function exported(id: string) {
  await drainExports(sessionStub("alpha", id).stub);
  return receiver.exports.flatMap(spansOf);
}

let receiver: ReturnType<typeof fakeOtlpReceiver>;

const linksOf = (span: { links: { traceId: string; spanId: string; attributes: unknown[] }[] }) =>
  span.links.map((l) => ({ trace_id: l.traceId, span_id: l.spanId }));

describe("a run resumed by a request in another trace", () => {
  it("an approval's decision: the relay.approval span links to the deciding request; the run keeps its trace", async () => {
    receiver = fakeOtlpReceiver(ENDPOINT);
    llmServer.use(http.post("https://tools.test/wire", () => HttpResponse.json({ sent: true })));
    script({ payer: [callTool("wire", { amount: 5 }), answer("Paid.")] });
    const id = await newSession("payer");
    const paused = (await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "pay" })).json.run;
    expect(paused.status).toBe("awaiting_approval");
    const item = (await call("GET", `/v1/sessions/${id}/inbox`)).json.items[0];
    const done = await call(
      "POST",
      `/v1/inbox/${item.id}/resolve`,
      { decision: "approve", by: "ops" },
      { headers: RESUMER },
    );
    expect(done.json.run).toMatchObject({ status: "completed", trace_id: paused.trace_id });
    const decided = done.json.run.events.find((e: { details: { outcome?: string } }) =>
      e.details.outcome?.startsWith("approved"),
    );
    expect(decided.details.resumed_by).toEqual({ trace_id: RESUMER_TRACE, span_id: RESUMER_SPAN });
    const spans = await exported(id);
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([paused.trace_id]));
    const approval = spans.find((s) => s.name === SPAN_NAME.approval)!;
    expect(linksOf(approval)).toEqual([{ trace_id: LINK.trace_id, span_id: LINK.span_id }]);
    expect(approval.links[0]!.attributes).toEqual([{ key: RELAY.linkKind, value: { stringValue: "resumed_by" } }]);
  });

  it("the client's tool outputs: the tool's span links to the request that posted them", async () => {
    receiver = fakeOtlpReceiver(ENDPOINT);
    script({ planner: [callTool("pick_slot", {}), answer("Booked.")] });
    const id = await newSession("planner");
    const paused = (await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "book" })).json.run;
    const outputs = [{ tool_call_id: paused.pending.tool_calls[0].id, output: "9am" }];
    const done = await call("POST", `/v1/sessions/${id}/tool-outputs`, { outputs }, { headers: RESUMER });
    expect(done.json.run.status).toBe("completed");
    const tool = (await exported(id)).find((s) => s.name === SPAN_NAME.executeTool("pick_slot"))!;
    expect(linksOf(tool)).toEqual([{ trace_id: LINK.trace_id, span_id: LINK.span_id }]);
  });

  it("a person's answer: the human turn links to the answering request; without a traceparent, no link", async () => {
    receiver = fakeOtlpReceiver(ENDPOINT);
    const id = await newSession("clerk");
    const waiting = (await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "help" })).json.run;
    expect(waiting.status).toBe("awaiting_human");
    const item = (await call("GET", `/v1/sessions/${id}/inbox`)).json.items[0];
    const answered = await call(
      "POST",
      `/v1/inbox/${item.id}/resolve`,
      { reply: "Done for you." },
      { headers: RESUMER },
    );
    expect(answered.json.run.status).toBe("completed");
    // One turn, from the run's start to the answer: the person's.
    const turns = (await exported(id)).filter((s) => s.name === SPAN_NAME.invokeAgent("clerk"));
    expect(turns).toHaveLength(1);
    expect(turns[0]!.attributes).toContainEqual({ key: RELAY.executor, value: { stringValue: "human" } });
    expect(linksOf(turns[0]!)).toEqual([{ trace_id: LINK.trace_id, span_id: LINK.span_id }]);

    receiver = fakeOtlpReceiver(ENDPOINT);
    const plain = await newSession("clerk");
    await call("POST", `/v1/sessions/${plain}/messages`, { role: "user", content: "help" });
    const other = (await call("GET", `/v1/sessions/${plain}/inbox`)).json.items[0];
    await call("POST", `/v1/inbox/${other.id}/resolve`, { reply: "Done." });
    const unlinked = (await exported(plain)).find((s) => s.name === SPAN_NAME.invokeAgent("clerk"))!;
    expect(unlinked.links).toEqual([]);
  });
});
