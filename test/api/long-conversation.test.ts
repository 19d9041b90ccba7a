import { countTokens } from "gpt-tokenizer/encoding/cl100k_base";
import { HttpResponse, http } from "msw";
import { beforeAll, describe, expect, it } from "vitest";
import { d1Audit, flushOutbox, sessionStub } from "../durable-objects/helpers";
import { answer, callTool, type FakeReply, fakeOpenAI, lastUserMessage, type RecordedRequest } from "../fakes/openai";
import { llmServer } from "../fakes/server";
import { call, newSession, say } from "./helpers";
import { protocolErrors, toolNames, wireInputTokens } from "./run-fixtures";

/**
 * A long conversation within a model's context (docs/memory.md): 400 messages and more, with
 * large tool outputs, through an agent whose budget is a few thousand tokens. The model is a
 * scripted OpenAI-compatible fake that reports usage as a real one does; what it receives is
 * counted here with the same vocabulary, independently of Relay's own counts.
 */

const BUDGET = 3000;
const KEEP_LAST = 6;
const OUTPUT_LIMIT = 400;
const FACT = "My locker code is 7319 and my name is Ada Quill.";

/** What a reply costs, as a provider reports it in `usage.completion_tokens`. */
function completionTokens(reply: Extract<FakeReply, { kind: "tools" | "content" }>): number {
  if (reply.kind === "content") return countTokens(reply.content);
  return reply.calls.reduce(
    (sum, c) => sum + 3 + countTokens(c.name) + countTokens(JSON.stringify(c.arguments ?? {})),
    countTokens(reply.content ?? ""),
  );
}

/** A summary request: its instructions say so (docs/memory.md, Compaction). */
const isSummaryRequest = (req: RecordedRequest) =>
  String(req.body.messages[0]?.content ?? "").startsWith("You compact a conversation");

/**
 * The scripted model: a summary request keeps the lines that carry the user's facts; a turn
 * looks a ledger page up when asked, says it read a tool's output, answers the locker-code
 * question from whatever it was sent (the summary included), and notes anything else.
 */
function respond(req: RecordedRequest): FakeReply {
  if (isSummaryRequest(req)) {
    const facts = lastUserMessage(req)
      .split("\n")
      .filter((line) => /locker code/.test(line));
    return answer(`Facts kept: ${[...new Set(facts)].join(" ")}`.slice(0, 1200));
  }
  const last = req.body.messages.at(-1)!;
  if (last.role === "tool") return answer("Read it.");
  const question = lastUserMessage(req);
  const page = /^Please look up ledger page (\d+)/.exec(question)?.[1];
  if (page) return callTool("ledger", { page: Number(page) });
  if (question === "What is my locker code?") {
    const sent = req.body.messages.map((m) => (typeof m.content === "string" ? m.content : "")).join("\n");
    const code = /locker code is (\d+)/.exec(sent)?.[1];
    return answer(code ? `Your locker code is ${code}.` : "I do not know.");
  }
  return answer("Noted.");
}

/** A ledger page: about 1,800 tokens of text, far past the agent's limit for one output. */
const ledgerPage = (page: number) =>
  Array.from({ length: 120 }, (_, i) => `Line ${i} of page ${page}: account ${page * 1000 + i} balanced.`).join("\n");

beforeAll(async () => {
  llmServer.use(
    http.post("https://tools.test/ledger", async ({ request }) => {
      const { data } = (await request.json()) as { data: { arguments: { page: number } } };
      return HttpResponse.text(ledgerPage(data.arguments.page));
    }),
  );
  const tool = await call("PUT", "/v1/tools/ledger", {
    name: "ledger",
    kind: "http",
    description: "Reads a ledger page",
    url: "https://tools.test/ledger",
    parameters: { type: "object", properties: { page: { type: "integer" } }, required: ["page"] },
  });
  if (tool.status !== 201) throw new Error(JSON.stringify(tool.json));
  const agent = await call("PUT", "/v1/agents/archivist", {
    name: "archivist",
    description: "Keeps the records",
    instructions: "Answer from the conversation.",
    tools: { allow: ["ledger"] },
    memory: { max_input_tokens: BUDGET, keep_last: KEEP_LAST, max_tool_output_tokens: OUTPUT_LIMIT },
  });
  if (agent.status >= 300) throw new Error(JSON.stringify(agent.json));
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
});

async function store(id: string, role: "user" | "assistant", content: string): Promise<void> {
  const body = role === "user" ? { role, content, run: false } : { role, content, agent: "archivist" };
  const res = await call("POST", `/v1/sessions/${id}/messages`, body);
  if (res.status !== 201) throw new Error(JSON.stringify(res.json));
}

async function allMessages(id: string): Promise<{ role: string; content: string; tokens: number | null }[]> {
  const items = [];
  let cursor = "";
  for (;;) {
    const page = await call("GET", `/v1/sessions/${id}/messages?limit=500${cursor ? `&cursor=${cursor}` : ""}`);
    items.push(...page.json.items);
    if (page.json.next_cursor === null) return items;
    cursor = page.json.next_cursor;
  }
}

describe("a 400-message conversation with large tool outputs", () => {
  it("never sends the model more than its budget, keeps the recent items whole, and remembers message 3 through the summary", async () => {
    const fake = fakeOpenAI({ baseUrl: "https://llm.test/v1", respond, completionTokens });
    llmServer.use(fake.handler);
    const id = await newSession("archivist");
    await store(id, "user", "Hello, I need help with my account.");
    await store(id, "assistant", "Of course. What can I do for you?");
    await store(id, "user", FACT);
    for (let i = 0; i < 372; i++) {
      if (i % 40 === 20) {
        const run = await say(id, `Please look up ledger page ${i}`);
        expect(run.json.run).toMatchObject({ status: "completed", output: "Read it." });
        continue;
      }
      await store(
        id,
        i % 2 === 0 ? "user" : "assistant",
        i % 2 === 0 ? `Note ${i}: the tram in district ${i} ran on time.` : `Noted item ${i}.`,
      );
    }
    const before = await allMessages(id);
    expect(before.length).toBeGreaterThanOrEqual(400);
    const asked = await say(id, "What is my locker code?");
    expect(asked.json.run).toMatchObject({ status: "completed", output: "Your locker code is 7319." });

    const turns = fake.requests.filter((r) => !isSummaryRequest(r));
    const summaries = fake.requests.filter(isSummaryRequest);
    expect(summaries.length).toBeGreaterThan(0);
    for (const req of fake.requests) {
      expect(wireInputTokens(req)).toBeLessThanOrEqual(BUDGET);
      expect(protocolErrors(req)).toEqual([]);
    }
    // The last question was answered from the summary: message 3 itself was not sent.
    const last = turns.at(-1)!;
    expect(last.body.messages.some((m) => m.content === FACT)).toBe(false);
    const summary = last.body.messages.find(
      (m) => m.role === "system" && String(m.content).startsWith("Summary of the earlier conversation"),
    );
    expect(summary?.content).toContain("7319");
    // The last K items of the history went out verbatim, in order (after the question).
    const sentTail = last.body.messages.slice(-KEEP_LAST - 1, -1);
    const storedTail = before.slice(-KEEP_LAST);
    expect(sentTail.map((m) => m.role)).toEqual(storedTail.map((m) => m.role));
    sentTail.forEach((m, i) => {
      const stored = storedTail[i]!;
      const shown = String(m.content ?? "");
      if (m.role === "tool") expect(stored.content.startsWith(shown.split("\n…[cut:")[0]!)).toBe(true);
      else expect(shown).toBe(stored.content);
    });

    // A ledger page was cut in what the model saw, with a way to read on; the history keeps it whole.
    const afterLookup = turns.find((r) => r.body.messages.at(-1)?.role === "tool")!;
    const output = String(afterLookup.body.messages.at(-1)!.content);
    expect(output).toMatch(/…\[cut: characters \d+ of \d+ shown\. Call read_tool_output with/);
    expect(toolNames(afterLookup)).toContain("read_tool_output");
    const whole = before.find((m) => m.role === "tool")!;
    expect(whole.content.length).toBeGreaterThan(output.length);
    expect(whole.content).toBe(ledgerPage(20));

    // Compaction never deletes: the history is all there, and each compaction says what it covers.
    const after = await allMessages(id);
    expect(after.length).toBe(before.length + 2);
    const { compactions } = (await call("GET", `/v1/sessions/${id}/compactions`)).json;
    expect(compactions.length).toBe(summaries.length);
    for (const c of compactions) {
      expect(c).toMatchObject({ agent: "archivist", strategy: "summarize", view: null, model: "fake-model" });
      expect(c.tokens_after).toBeLessThan(c.tokens_before);
      expect(c.through_seq).toBeGreaterThan(c.from_seq);
    }
    expect(compactions[0].from_seq).toBe(1);
    expect(compactions.at(-1).content).toContain("7319");
    // Visible on the run's timeline, and audited.
    const trace = (await call("GET", `/v1/sessions/${id}/trace?limit=1000`)).json.items;
    const traced = trace.filter((e: { event_type: string }) => e.event_type === "compaction");
    expect(traced.map((e: { details: { compaction: { id: string } } }) => e.details.compaction.id)).toEqual(
      compactions.map((c: { id: string }) => c.id),
    );
    await flushOutbox(sessionStub("alpha", id).stub);
    const audited = (await d1Audit(id)).filter((r) => r.action === "memory.compacted");
    expect(audited.length).toBe(compactions.length);
  });
});
