import { beforeAll, describe, expect, it } from "vitest";
import { answer, callTool, httpError, type RecordedRequest } from "../fakes/openai";
import { call } from "./helpers";
import { agentOf, protocolErrors, script, toolNames } from "./run-fixtures";

/**
 * An agent's turn talking to other agents (docs/collaboration.md): ask_agent (a query the other agent
 * answers in a turn of its own), notify_agent and broadcast, through the session's
 * collaboration, offered when the agent's tools.allow names them.
 */

beforeAll(async () => {
  for (const agent of [
    {
      name: "lead",
      description: "Team lead",
      handoffs: ["pricing", "legal", "hr"],
      tools: { allow: ["ask_agent", "notify_agent", "broadcast"] },
    },
    { name: "quiet", description: "Allows none of them", handoffs: ["pricing"] },
    { name: "pricing", description: "Prices", capabilities: [{ name: "quotes", proficiency: 0.9 }] },
    { name: "legal", description: "Contracts", capabilities: [{ name: "quotes", proficiency: 0.3 }] },
    { name: "hr", kind: "human", description: "People" },
  ]) {
    const res = await call("PUT", `/v1/agents/${agent.name}`, agent);
    if (res.status >= 300) throw new Error(JSON.stringify(res.json));
  }
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
});

const toolOutputs = (req: RecordedRequest) =>
  req.body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));

async function run(agent: string, content: string) {
  const id = (await call("POST", "/v1/sessions", { agent })).json.id as string;
  const res = await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content });
  return { id, run: res.json.run };
}

describe("agent-to-agent tools", () => {
  it("are offered only when allowed, with the whitelist's model agents as whom to ask (people are not)", async () => {
    const fake = script({ lead: [answer("hi")], quiet: [answer("hi")] });
    await run("lead", "hello");
    await run("quiet", "hello");
    const lead = fake.requests.find((r) => agentOf(r) === "lead")!;
    expect(toolNames(lead)).toEqual([
      "ask_agent",
      "broadcast",
      "escalate_to_human",
      "notify_agent",
      "transfer_to_hr",
      "transfer_to_legal",
      "transfer_to_pricing",
    ]);
    const ask = lead.body.tools!.find((t) => t.function.name === "ask_agent")!;
    expect((ask.function.parameters as { properties: { agent: { enum: string[] } } }).properties.agent.enum).toEqual([
      "pricing",
      "legal",
    ]);
    expect(toolNames(fake.requests.find((r) => agentOf(r) === "quiet")!)).not.toContain("ask_agent");
  });

  it("ask_agent: the other agent answers in a turn of its own; the answer is the call's output, the exchange is in the session's collaboration", async () => {
    const fake = script({
      lead: [callTool("ask_agent", { agent: "pricing", question: "Quote for 10 seats?" }), answer("It is €900.")],
      pricing: [answer("€900 a year.")],
    });
    const { id, run: r } = await run("lead", "how much for 10 seats?");
    expect(r).toMatchObject({ status: "completed", output: "It is €900.", output_agent: "lead" });
    const asked = fake.requests.find((q) => agentOf(q) === "pricing")!;
    expect(asked.body.messages.at(-1)).toMatchObject({ role: "user", content: "Quote for 10 seats?" });
    const second = fake.requests.filter((q) => agentOf(q) === "lead")[1]!;
    expect(toolOutputs(second)).toEqual(["€900 a year."]);
    expect(protocolErrors(second)).toEqual([]);
    const collaboration = (await call("GET", `/v1/collaborations/col_${id.slice(4, 30)}`)).json;
    expect(collaboration.participants).toEqual(["lead", "pricing", "legal", "hr"]);
    expect(
      collaboration.messages.map(
        (m: { type: string; from: string; status: string }) => `${m.type}:${m.from}:${m.status}`,
      ),
    ).toEqual(["query:lead:answered", "response:pricing:sent"]);
    expect((await call("GET", "/v1/agents/lead/blocking")).json.status).toBe("none");
  });

  it("ask_agent when the other agent fails: an error output, the query cancelled, the asker not left blocked", async () => {
    const fake = script({
      lead: [
        callTool("ask_agent", { agent: "legal", question: "Is this clause ok?" }),
        answer("Legal is unavailable."),
      ],
      legal: [httpError(500)],
    });
    const { id } = await run("lead", "check the clause");
    expect(toolOutputs(fake.requests.filter((q) => agentOf(q) === "lead")[1]!)).toEqual([
      "Error: 'legal' did not answer (MODEL_ERROR).",
    ]);
    const messages = (await call("GET", `/v1/collaborations/col_${id.slice(4, 30)}`)).json.messages;
    expect(messages.map((m: { type: string; status: string }) => `${m.type}:${m.status}`)).toEqual([
      "query:cancelled",
      "cancel:sent",
    ]);
    expect((await call("GET", "/v1/agents/lead/blocking")).json.status).toBe("none");
  });

  it("notify_agent and broadcast with capabilities: recorded, and the broadcast answered by the capability matcher", async () => {
    const fake = script({
      lead: [
        callTool("notify_agent", { agent: "legal", message: "New contract coming" }),
        callTool("broadcast", { message: "Who can quote?", capabilities: ["quotes"] }),
        answer("done"),
      ],
    });
    const { id } = await run("lead", "get it moving");
    const leadTurns = fake.requests.filter((q) => agentOf(q) === "lead");
    expect(toolOutputs(leadTurns[1]!)).toEqual(["Sent to 'legal'."]);
    expect(JSON.parse(toolOutputs(leadTurns[2]!)[1]!)).toEqual({
      matches: [
        { agent: "pricing", score: 0.9, missing: [] },
        { agent: "legal", score: 0.3, missing: [] },
      ],
    });
    const types = (await call("GET", `/v1/collaborations/col_${id.slice(4, 30)}`)).json.messages.map(
      (m: { type: string }) => m.type,
    );
    expect(types).toEqual(["notify", "broadcast"]);
  });

  it("an agent that may not use them gets an error naming its allowed tools, and nothing is sent", async () => {
    const fake = script({ quiet: [callTool("ask_agent", { agent: "pricing", question: "?" }), answer("ok")] });
    const { id } = await run("quiet", "hello");
    expect(toolOutputs(fake.requests[1]!)[0]).toContain("'ask_agent' is not a tool you may use");
    expect((await call("GET", `/v1/collaborations/col_${id.slice(4, 30)}`)).status).toBe(404);
  });
});
