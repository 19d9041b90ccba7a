import { beforeAll, describe, expect, it } from "vitest";
import { derivedSpanId } from "../../src/telemetry/span-ids";
import { parseTraceparent } from "../../src/telemetry/trace-context";
import { answer, callTool, fakeOpenAI, type RecordedRequest } from "../fakes/openai";
import { llmServer } from "../fakes/server";
import { fakeWebhookAgent, replyOutput } from "../fakes/webhook-agent";
import { call, newSession, putAgents } from "./helpers";
import { agentOf, script } from "./run-fixtures";

/**
 * The model calls a run makes besides its turns, in the run's trace (docs/observability.md,
 * Propagation): a compaction's summary, and a fan-out's tasks (model and webhook agents) and
 * aggregate, each with the span of the turn they were made for. The outside world is faked at
 * the fetch boundary; sessions, storage and timers are real.
 */

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE}-${CALLER_SPAN}-01`;

const AGENTS = [
  { name: "summarizer", description: "Long talks", memory: { max_input_tokens: 2000, compact_at: 0.5, keep_last: 4 } },
  {
    name: "lead",
    description: "Lead",
    handoffs: ["forecast", "rails"],
    tools: { allow: ["fan_out", "ask_agent"] },
  },
  { name: "forecast", description: "Weather" },
  { name: "rails", kind: "webhook", endpoint: "https://rails.test/agent" },
];

beforeAll(async () => {
  await putAgents(AGENTS);
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
});

const say = (id: string, content: string, headers: Record<string, string> = {}) =>
  call("POST", `/v1/sessions/${id}/messages`, { role: "user", content }, { headers });

/** A request's traceparent, parsed; null when it has none. */
const parentOf = (headers: Record<string, string>) =>
  headers.traceparent === undefined ? null : parseTraceparent(headers.traceparent);

/** The context a call of the run's first turn sends. */
function firstTurn(run: { trace_id: string; events: { event_id: string; event_type: string }[] }) {
  const start = run.events.find((e) => e.event_type === "agent_start")!;
  return { trace_id: run.trace_id, span_id: derivedSpanId(run.trace_id, start.event_id, "turn"), sampled: true };
}

const isSummary = (req: RecordedRequest) =>
  String(req.body.messages[0]?.content ?? "").startsWith("You compact a conversation");

describe("a compaction's summary", () => {
  it("is asked in the run's trace, with the span of the turn it is made for", async () => {
    const model = fakeOpenAI({
      baseUrl: "https://llm.test/v1",
      respond: (req) => answer(isSummary(req) ? "The crates left on time." : "Crate 3 left on time."),
    });
    llmServer.use(model.handler);
    const id = await newSession("summarizer");
    for (let i = 0; i < 80; i++) {
      const body =
        i % 2 === 0
          ? { role: "user", content: `Note ${i}: the parcel for crate ${i} left the dock on time today.`, run: false }
          : { role: "assistant", content: `Noted crate ${i}.` };
      const res = await call("POST", `/v1/sessions/${id}/messages`, body);
      if (res.status !== 201) throw new Error(JSON.stringify(res.json));
    }
    const run = (await say(id, "Where is crate 3?", { traceparent: TRACEPARENT, tracestate: "vendor=abc" })).json.run;
    expect(run).toMatchObject({ status: "completed", trace_id: TRACE });
    expect(run.events.map((e: { event_type: string }) => e.event_type)).toContain("compaction");
    const summaries = model.requests.filter(isSummary);
    expect(summaries.length).toBeGreaterThan(0);
    for (const req of model.requests) {
      expect(parentOf(req.headers), isSummary(req) ? "summary" : "turn").toEqual(firstTurn(run));
      expect(req.headers.tracestate).toBe("vendor=abc");
    }
  });
});

describe("a fan-out", () => {
  it("in a run: its tasks, model and webhook, and its aggregate carry the trace of the turn that called fan_out", async () => {
    const rails = fakeWebhookAgent({ url: "https://rails.test/agent", respond: () => replyOutput("3h by train") });
    llmServer.use(rails.handler);
    const model = script({
      lead: [
        callTool("fan_out", {
          tasks: [
            { agent: "forecast", instruction: "Lisbon weather" },
            { agent: "rails", instruction: "Porto trains" },
          ],
        }),
        answer("Sunny; 3h."),
        answer("Go: sunny, and 3h by train."),
      ],
      forecast: [answer("Sunny")],
    });
    const id = await newSession("lead");
    const run = (await say(id, "weekend in Lisbon?", { traceparent: TRACEPARENT })).json.run;
    expect(run).toMatchObject({ status: "completed", output: "Go: sunny, and 3h by train." });
    const turn = firstTurn(run);
    expect(model.requests.map((r) => [agentOf(r), parentOf(r.headers)])).toEqual([
      ["lead", turn],
      ["forecast", turn],
      ["lead", turn],
      ["lead", turn],
    ]);
    expect(rails.deliveries).toHaveLength(1);
    expect(parentOf(rails.deliveries[0]!.headers)).toEqual(turn);
  });

  it("an agent asked with ask_agent answers in the run's trace, with the asking turn's span", async () => {
    const model = script({
      lead: [callTool("ask_agent", { agent: "forecast", question: "Lisbon this weekend?" }), answer("Sunny, go.")],
      forecast: [answer("Sunny")],
    });
    const id = await newSession("lead");
    const run = (await say(id, "weekend in Lisbon?", { traceparent: TRACEPARENT })).json.run;
    expect(run).toMatchObject({ status: "completed", output: "Sunny, go." });
    const turn = firstTurn(run);
    expect(model.requests.map((r) => [agentOf(r), parentOf(r.headers)])).toEqual([
      ["lead", turn],
      ["forecast", turn],
      ["lead", turn],
    ]);
  });

  it("through the API, outside a run: no trace on its calls", async () => {
    const rails = fakeWebhookAgent({ url: "https://rails.test/agent", respond: () => replyOutput("3h by train") });
    llmServer.use(rails.handler);
    const model = script({ forecast: [answer("Sunny")], lead: [answer("Sunny, 3h.")] });
    const id = await newSession("lead");
    const decomposition = {
      original_query: "weekend in Lisbon?",
      tasks: [
        { task_id: "w", agent: "forecast", instruction: "Lisbon weather" },
        { task_id: "t", agent: "rails", instruction: "Porto trains" },
      ],
    };
    const res = await call(
      "POST",
      `/v1/sessions/${id}/fan-out`,
      { decomposition },
      { headers: { traceparent: TRACEPARENT } },
    );
    expect(res.json.state).toBe("COMPLETED");
    expect(model.requests).toHaveLength(2);
    for (const r of model.requests) expect(r.headers.traceparent, agentOf(r)).toBeUndefined();
    expect(rails.deliveries[0]!.headers.traceparent).toBeUndefined();
  });
});
