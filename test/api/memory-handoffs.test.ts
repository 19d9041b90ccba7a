import { runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { sessionStub } from "../durable-objects/helpers";
import { answer, callTool, type FakeReply, fakeOpenAI, lastUserMessage, type RecordedRequest } from "../fakes/openai";
import { llmServer } from "../fakes/server";
import type { SessionDO } from "../worker";
import { call, newSession, say } from "./helpers";
import { agentOf, protocolErrors } from "./run-fixtures";

/**
 * Memory across handoffs and crashes (docs/memory.md): `history: summary` hands the target the
 * source's compaction and what followed in one message, a chain of such handoffs never sends an
 * item twice, and a crash inside a compaction's transaction leaves the old view whole, which
 * the next message compacts.
 */

const isSummary = (req: RecordedRequest) =>
  String(req.body.messages[0]?.content ?? "").startsWith("You compact a conversation");

/** Keeps the transcript's lines about the claim: the scripted model's summary. */
const summarize = (req: RecordedRequest): FakeReply =>
  answer(
    `Facts kept: ${lastUserMessage(req)
      .split("\n")
      .filter((line) => line.includes("claim"))
      .join(" ")}`,
  );

async function fill(id: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const body =
      i % 2 === 0
        ? { role: "user", content: `Note ${i}: the parcel for crate ${i} left the dock on time today.`, run: false }
        : { role: "assistant", content: `Noted crate ${i}.`, agent: "front" };
    const res = await call("POST", `/v1/sessions/${id}/messages`, body);
    if (res.status !== 201) throw new Error(JSON.stringify(res.json));
  }
}

const summaryFilter = { filter: { history: "summary" } };

beforeAll(async () => {
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
  const agents = [
    {
      name: "front",
      handoffs: [{ to: "back", ...summaryFilter }],
      memory: { max_input_tokens: 1500, keep_last: 4 },
    },
    { name: "back", description: "Takes over" },
    { name: "hop1", handoffs: [{ to: "hop2", ...summaryFilter }] },
    { name: "hop2", handoffs: [{ to: "hop3", ...summaryFilter }] },
    { name: "hop3", handoffs: [{ to: "hop4", ...summaryFilter }] },
    { name: "hop4", handoffs: [{ to: "hop5", ...summaryFilter }] },
    { name: "hop5" },
    { name: "keeper", memory: { max_input_tokens: 1500, keep_last: 4 } },
  ];
  for (const agent of agents) {
    const res = await call("PUT", `/v1/agents/${agent.name}`, { description: `${agent.name} agent`, ...agent });
    if (res.status >= 300) throw new Error(JSON.stringify(res.json));
  }
});

describe("history: summary", () => {
  it("hands the target the source's summary and what followed, in one message", async () => {
    const fake = fakeOpenAI({
      baseUrl: "https://llm.test/v1",
      respond: (req) => {
        if (isSummary(req)) return summarize(req);
        if (agentOf(req) === "front") return callTool("transfer_to_back", { reason: "claims desk" });
        return answer("back here");
      },
    });
    llmServer.use(fake.handler);
    const id = await newSession("front");
    await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "My claim is C-7731.", run: false });
    await fill(id, 90);
    const run = await say(id, "Please pass me on");
    expect(run.json.run).toMatchObject({ status: "completed", output: "back here", agent: "back" });
    const { compactions } = (await call("GET", `/v1/sessions/${id}/compactions`)).json;
    expect(compactions).toHaveLength(1);
    const back = fake.requests.find((r) => agentOf(r) === "back")!;
    const nested = back.body.messages.filter((m) => String(m.content).startsWith("Conversation before the handoff"));
    expect(nested).toHaveLength(1);
    expect(nested[0]!.content).toContain("C-7731");
    expect(nested[0]!.content).toContain("Summary of the earlier conversation");
    // The covered items themselves were not passed on.
    expect(back.body.messages.some((m) => String(m.content).includes("crate 0 left"))).toBe(false);
    expect(back.body.messages[0]!.content).toContain("the handing agent's latest summary and what followed it");
  });

  it("through a chain of four handoffs, no target is sent an item twice", async () => {
    const next: Record<string, string> = { hop1: "hop2", hop2: "hop3", hop3: "hop4", hop4: "hop5" };
    const fake = fakeOpenAI({
      baseUrl: "https://llm.test/v1",
      respond: (req) => {
        const agent = agentOf(req);
        return next[agent] ? callTool(`transfer_to_${next[agent]}`, { reason: "onwards" }) : answer("end of the line");
      },
    });
    llmServer.use(fake.handler);
    const id = await newSession("hop1");
    const run = await say(id, "The one message of claim C-42");
    expect(run.json.run).toMatchObject({ status: "completed", agent: "hop5", output: "end of the line" });
    expect(fake.requests.map(agentOf)).toEqual(["hop1", "hop2", "hop3", "hop4", "hop5"]);
    for (const req of fake.requests) {
      expect(protocolErrors(req)).toEqual([]);
      const text = req.body.messages.map((m) => String(m.content ?? "")).join("\n");
      expect(text.split("The one message of claim C-42").length - 1).toBe(1);
    }
  });
});

describe("a crash while a compaction is written", () => {
  it("leaves the old view whole, and the next message compacts it", async () => {
    const fake = fakeOpenAI({
      baseUrl: "https://llm.test/v1",
      respond: (req) => (isSummary(req) ? summarize(req) : answer("answered")),
    });
    llmServer.use(fake.handler);
    const id = await newSession("keeper");
    await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "My claim is K-9.", run: false });
    await fill(id, 90);
    const { stub } = sessionStub("alpha", id);
    const countedBefore = await countedTokens(stub);
    // The compaction's transaction fails after writing its row: none of it stays.
    await stub.setFault("compaction");
    const crashed = await say(id, "Where is my claim?");
    expect(crashed.json.run).toMatchObject({ status: "failed", error: { code: "INTERNAL" } });
    expect(fake.requests.filter(isSummary).length).toBeGreaterThan(0);
    expect(fake.requests.filter((r) => !isSummary(r))).toHaveLength(0);
    expect((await call("GET", `/v1/sessions/${id}/compactions`)).json.compactions).toEqual([]);
    expect(await countedTokens(stub)).toBe(countedBefore);
    const run = (await call("GET", `/v1/sessions/${id}/runs/${crashed.json.run.id}`)).json;
    expect(run.events.some((e: { event_type: string }) => e.event_type === "compaction")).toBe(false);
    // The next message makes the compaction whole, and the model reads the claim in its summary.
    const next = await say(id, "Where is my claim?");
    expect(next.json.run).toMatchObject({ status: "completed", output: "answered" });
    const { compactions } = (await call("GET", `/v1/sessions/${id}/compactions`)).json;
    expect(compactions).toHaveLength(1);
    expect(compactions[0].content).toContain("K-9");
    const turn = fake.requests.filter((r) => !isSummary(r)).at(-1)!;
    expect(turn.body.messages[1]!.content).toContain("K-9");
  });
});

/** How many of the session's first 91 messages (those before the question) have their tokens stored. */
async function countedTokens(stub: DurableObjectStub<SessionDO>): Promise<number> {
  return runInDurableObject(stub, (instance: SessionDO) => {
    const row = instance.ownSql()<{ n: number }>`SELECT COUNT(tokens) AS n FROM messages WHERE seq <= 91`[0];
    return row?.n ?? 0;
  });
}
