import { beforeAll, describe, expect, it } from "vitest";
import { answer } from "../fakes/openai";
import { call } from "./helpers";
import { script } from "./run-fixtures";

/**
 * Output guardrails end to end (docs/runs.md): reject, repair (and a repair that still fails), warn —
 * each a guardrail trace event.
 */

const SCHEMA = {
  type: "object",
  properties: { answer: { type: "string" } },
  required: ["answer"],
  additionalProperties: false,
};
const AGENTS = (["reject", "repair", "warn"] as const).map((on_failure) => ({
  name: `g-${on_failure}`,
  description: on_failure,
  guardrails: { output_schema: SCHEMA, on_failure },
}));

beforeAll(async () => {
  for (const agent of AGENTS) {
    const res = await call("PUT", `/v1/agents/${agent.name}`, agent);
    if (res.status >= 300) throw new Error(JSON.stringify(res.json));
  }
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
});

async function runOf(agent: string, content = "question") {
  const session = await call("POST", "/v1/sessions", { agent });
  const res = await call("POST", `/v1/sessions/${session.json.id}/messages`, { role: "user", content });
  const guardrails = res.json.run.events
    .filter((e: { event_type: string }) => e.event_type === "guardrail")
    .map((e: { details: { outcome: string } }) => e.details.outcome);
  return { run: res.json.run, guardrails, status: res.status, session: session.json.id };
}

describe("output guardrails", () => {
  it("a fitting answer passes; the model was told the schema up front", async () => {
    const fake = script({ "g-reject": [answer('{"answer":"42"}')] });
    const { run, guardrails } = await runOf("g-reject");
    expect(run).toMatchObject({ status: "completed", output: '{"answer":"42"}', warnings: [] });
    expect(guardrails).toEqual(["passed"]);
    expect(fake.requests[0]!.body.messages[0]!.content).toContain("must be only JSON that matches this JSON Schema");
  });

  it("reject: the run fails with GUARDRAIL_FAILED and the validation errors; the answer is not kept", async () => {
    script({ "g-reject": [answer('{"answer":42}')] });
    const { run, guardrails, session } = await runOf("g-reject");
    expect(run).toMatchObject({ status: "failed", output: null, error: { code: "GUARDRAIL_FAILED" } });
    expect(run.error.details.errors.join()).toContain("#/answer");
    expect(guardrails).toEqual(["rejected"]);
    const history = (await call("GET", `/v1/sessions/${session}/messages`)).json.items;
    expect(history.filter((i: { role: string }) => i.role === "assistant")).toEqual([]);
  });

  it("repair: one more model call with the errors; a fixed answer completes the run", async () => {
    const fake = script({ "g-repair": [answer("the answer is 42"), answer('{"answer":"42"}')] });
    const { run, guardrails } = await runOf("g-repair");
    expect(run).toMatchObject({ status: "completed", output: '{"answer":"42"}', turns: 2 });
    expect(guardrails).toEqual(["repair requested", "repaired"]);
    const repair = fake.requests[1]!.body.messages;
    expect(repair.at(-2)).toMatchObject({ role: "assistant", content: "the answer is 42" });
    expect(repair.at(-1)!.content).toContain("the output is not JSON");
  });

  it("repair that still fails: rejected after the one repair", async () => {
    const fake = script({ "g-repair": [answer("no"), answer("still no")] });
    const { run, guardrails } = await runOf("g-repair");
    expect(run).toMatchObject({ status: "failed", error: { code: "GUARDRAIL_FAILED" } });
    expect(guardrails).toEqual(["repair requested", "rejected after repair"]);
    expect(fake.requests).toHaveLength(2);
  });

  it("warn: the answer is returned with the warning", async () => {
    script({ "g-warn": [answer("plain text")] });
    const { run, guardrails, status } = await runOf("g-warn");
    expect(status).toBe(200);
    expect(run).toMatchObject({
      status: "completed",
      output: "plain text",
      warnings: [{ code: "GUARDRAIL_FAILED", details: { errors: ["the output is not JSON"] } }],
    });
    expect(guardrails).toEqual(["warned"]);
  });
});
