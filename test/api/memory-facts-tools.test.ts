import { beforeAll, describe, expect, it } from "vitest";
import { d1Audit, flushOutbox, sessionStub } from "../durable-objects/helpers";
import { answer, callTools, type FakeReply, fakeOpenAI, type RecordedRequest } from "../fakes/openai";
import { llmServer } from "../fakes/server";
import { call, newSession, say } from "./helpers";
import { agentOf, toolNames } from "./run-fixtures";

/**
 * Agents writing the session's facts (docs/memory.md, Facts): `remember` and `forget` offered with
 * `memory.facts`, answered by the session in the step's transaction with their audit records,
 * and every fact in every agent's prompt from the next turn on — an agent without the tools too.
 */

beforeAll(async () => {
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
  for (const agent of [
    { name: "clerk", memory: { facts: true }, handoffs: ["reader"] },
    { name: "reader", description: "Reads only" },
  ]) {
    const res = await call("PUT", `/v1/agents/${agent.name}`, { description: `${agent.name} agent`, ...agent });
    if (res.status >= 300) throw new Error(JSON.stringify(res.json));
  }
});

function model(replies: Record<string, FakeReply[]>) {
  const fake = fakeOpenAI({
    baseUrl: "https://llm.test/v1",
    respond: (req: RecordedRequest) => replies[agentOf(req)]?.shift() ?? answer("done"),
  });
  llmServer.use(fake.handler);
  return fake;
}

const system = (req: RecordedRequest) => String(req.body.messages[0]?.content ?? "");

describe("remember and forget", () => {
  it("write the facts in the step, put them in the next prompt, and audit the key without the value", async () => {
    const fake = model({
      clerk: [
        callTools(
          { name: "remember", arguments: { key: "customer", value: "Ada Quill" } },
          { name: "remember", arguments: { key: "order.id", value: "A-2001" } },
          { name: "remember", arguments: { key: "bad key!", value: "x" } },
        ),
        callTools({ name: "forget", arguments: { key: "order.id" } }, { name: "forget", arguments: { key: "nope" } }),
        answer("Noted."),
      ],
    });
    const id = await newSession("clerk");
    const run = await say(id, "I am Ada Quill, order A-2001.");
    expect(run.json.run).toMatchObject({ status: "completed", output: "Noted." });
    expect(toolNames(fake.requests[0]!)).toEqual(expect.arrayContaining(["forget", "remember"]));
    expect(system(fake.requests[0]!)).not.toContain("# Session memory");
    // The second turn sees both facts; the bad key's call got an error output it can read.
    expect(system(fake.requests[1]!)).toContain("# Session memory");
    expect(system(fake.requests[1]!)).toContain("- customer: Ada Quill\n- order.id: A-2001");
    const outputs = fake.requests[1]!.body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    expect(outputs).toEqual([
      expect.stringMatching(/^Remembered 'customer' \(1 of 50 facts/),
      expect.stringMatching(/^Remembered 'order.id' \(2 of 50 facts/),
      expect.stringMatching(/^Error: the arguments do not match the parameters of 'remember'/),
    ]);
    // The third, after forget: one fact left; forgetting what is not there is an error output.
    expect(system(fake.requests[2]!)).toContain("- customer: Ada Quill");
    expect(system(fake.requests[2]!)).not.toContain("A-2001");
    expect(String(fake.requests[2]!.body.messages.at(-1)!.content)).toBe("Error: there is no fact 'nope' to forget.");
    const view = (await call("GET", `/v1/sessions/${id}/memory`)).json;
    expect(view.facts).toEqual([expect.objectContaining({ key: "customer", value: "Ada Quill", agent: "clerk" })]);
    await flushOutbox(sessionStub("alpha", id).stub);
    const audit = (await d1Audit(id)).map((r) => r.action).filter((a) => a.startsWith("memory."));
    expect(audit).toEqual(["memory.fact_written", "memory.fact_written", "memory.fact_deleted"]);
  });

  it("an agent without the tools is not offered them, and still sees the facts a person wrote", async () => {
    const fake = model({ reader: [answer("I see Ada.")] });
    const id = (await call("POST", "/v1/sessions", { agent: "reader" })).json.id as string;
    expect((await call("PUT", `/v1/sessions/${id}/memory/customer`, { value: "Ada Quill" })).status).toBe(200);
    const run = await say(id, "Who am I?");
    expect(run.json.run).toMatchObject({ status: "completed", output: "I see Ada." });
    expect(toolNames(fake.requests[0]!)).not.toContain("remember");
    expect(system(fake.requests[0]!)).toContain("- customer: Ada Quill");
  });
});
