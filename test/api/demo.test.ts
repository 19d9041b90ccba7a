/// <reference types="vite/client" />
import { beforeAll, describe, expect, it } from "vitest";
import { parseAgentFile } from "../../src/registry/agent-file";
import { BETA_KEY, call } from "./helpers";

/**
 * The README's offline walk-through, step by step: the demo team in agents/*.md, the
 * `local` provider (no network, no keys), a real conversation. If this fails, the
 * walk-through a newcomer runs after `npm run dev` fails too.
 */

const demo = import.meta.glob("../../agents/*.md", { query: "?raw", import: "default", eager: true }) as Record<
  string,
  string
>;
// The beta tenant keeps its default configuration (the local provider) whatever other files set for alpha.
const as = { key: BETA_KEY };

beforeAll(async () => {
  for (const [path, text] of Object.entries(demo)) {
    const agent = parseAgentFile(text, path);
    const res = await call("PUT", `/v1/agents/${agent.name}`, agent, as);
    if (res.status >= 300) throw new Error(`PUT ${agent.name}: ${JSON.stringify(res.json)}`);
  }
});

const say = (id: string, content: string) => call("POST", `/v1/sessions/${id}/messages`, { role: "user", content }, as);
const handoffsOf = (run: { events: { event_type: string; details: { from_agent?: string; to_agent?: string } }[] }) =>
  run.events.filter((e) => e.event_type === "handoff").map((e) => `${e.details.from_agent}→${e.details.to_agent}`);

describe("the offline demo conversation", () => {
  it("triage hands billing the question, billing hands back, a refund over the limit waits for the supervisor, who answers from the inbox", async () => {
    const created = await call("POST", "/v1/sessions", { agent: "triage" }, as);
    expect(created.status).toBe(201);
    const id: string = created.json.id;

    const billing = await say(id, "I was charged twice on my last invoice");
    expect(billing.status).toBe(200);
    expect(billing.json.run).toMatchObject({ status: "completed", output_agent: "billing" });
    expect(handoffsOf(billing.json.run)).toEqual(["triage→billing"]);
    expect(billing.json.run.output).toContain("charged twice");
    expect(
      billing.json.run.events
        .filter((e: { event_type: string }) => e.event_type === "llm_call")
        .map((e: { details: { model: string } }) => e.details.model),
    ).toEqual(["local", "local"]);

    const back = await say(id, "Thanks, that is sorted. Back to triage please");
    expect(back.json.run).toMatchObject({ status: "completed", output_agent: "triage" });
    expect(handoffsOf(back.json.run)).toEqual(["billing→triage"]);
    expect((await call("GET", `/v1/sessions/${id}`, undefined, as)).json.handoff_stack).toEqual(["triage"]);

    // The supervisor is offered to billing only over the limit: a refund of 200 stays with billing.
    expect((await call("PATCH", `/v1/sessions/${id}/state`, { set: { refund_amount: 200 } }, as)).status).toBe(200);
    const small = await say(id, "I want a refund for my subscription");
    expect(small.json.run).toMatchObject({ status: "completed", output_agent: "billing" });
    expect((await say(id, "Back to triage please")).json.run).toMatchObject({
      status: "completed",
      output_agent: "triage",
    });

    expect((await call("PATCH", `/v1/sessions/${id}/state`, { set: { refund_amount: 900 } }, as)).status).toBe(200);
    const large = await say(id, "I want a refund of 900 dollars for my subscription");
    expect(large.status).toBe(200);
    expect(large.json.run).toMatchObject({
      status: "awaiting_human",
      agent: "supervisor",
      pending: { kind: "human", agent: "supervisor" },
    });
    expect(handoffsOf(large.json.run)).toEqual(["triage→billing", "billing→supervisor"]);

    const inbox = await call("GET", `/v1/sessions/${id}/inbox`, undefined, as);
    expect(inbox.json.items).toEqual([
      expect.objectContaining({ kind: "human_turn", agent: "supervisor", status: "open", run_id: large.json.run.id }),
    ]);

    const resolved = await call(
      "POST",
      `/v1/inbox/${large.json.run.pending.inbox_id}/resolve`,
      { reply: "Refund of $900 approved." },
      as,
    );
    expect(resolved.status).toBe(200);
    expect(resolved.json.run).toMatchObject({
      id: large.json.run.id,
      status: "completed",
      output_agent: "supervisor",
      output: "Refund of $900 approved.",
    });
    const trace = (await call("GET", `/v1/sessions/${id}/trace`, undefined, as)).json.items;
    expect(trace.at(-1)).toMatchObject({
      event_type: "agent_complete",
      agent_name: "supervisor",
      details: { executor: "human" },
    });
  });

  it("a session the router started has the decision as its trace's first event", async () => {
    const created = await call("POST", "/v1/sessions", { input: "I was charged twice for my subscription" }, as);
    expect(created.json.current_agent).toBe("billing");
    const run = await say(created.json.id, "and the invoice is wrong");
    const trace = (await call("GET", `/v1/sessions/${created.json.id}/trace`, undefined, as)).json.items;
    expect(trace[0]).toMatchObject({
      event_type: "route",
      agent_name: "billing",
      correlation_id: created.json.id,
      details: { to_agent: "billing", routing_method: "rule", routing_confidence: expect.any(Number) },
    });
    expect(trace.slice(1).map((e: { correlation_id: string }) => e.correlation_id)).toEqual(
      run.json.run.events.map(() => run.json.run.id),
    );
  });
});
