import { HttpResponse, http } from "msw";
import { beforeAll, describe, expect, it } from "vitest";
import {
  answer,
  callTool,
  type FakeReply,
  fakeOpenAI,
  httpError,
  lastUserMessage,
  type RecordedRequest,
} from "../fakes/openai";
import { llmServer } from "../fakes/server";
import { BETA_KEY, call, newSession, say } from "./helpers";
import { protocolErrors, wireInputTokens } from "./run-fixtures";

/**
 * The memory strategies and tools past the happy path (docs/memory.md): `trim` (no model call),
 * `none` (CONTEXT_TOO_LARGE before the model is asked), a summary that fails, reading a cut
 * tool output on with `read_tool_output`, and compaction offline with the local provider.
 */

const isSummary = (req: RecordedRequest) =>
  String(req.body.messages[0]?.content ?? "").startsWith("You compact a conversation");

/** Registers an agent for the alpha tenant, on the fake model. */
async function agent(name: string, memory: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const res = await call("PUT", `/v1/agents/${name}`, { name, description: `${name} agent`, memory, ...extra });
  if (res.status >= 300) throw new Error(JSON.stringify(res.json));
}

/** `n` short items stored without runs, user and assistant in turn. */
async function fill(id: string, n: number, key?: string): Promise<void> {
  for (let i = 0; i < n; i++) {
    const body =
      i % 2 === 0
        ? { role: "user", content: `Note ${i}: the parcel for crate ${i} left the dock on time today.`, run: false }
        : { role: "assistant", content: `Noted crate ${i}.` };
    const res = await call("POST", `/v1/sessions/${id}/messages`, body, key ? { key } : {});
    if (res.status !== 201) throw new Error(JSON.stringify(res.json));
  }
}

function model(respond: (req: RecordedRequest) => FakeReply) {
  const fake = fakeOpenAI({ baseUrl: "https://llm.test/v1", respond });
  llmServer.use(fake.handler);
  return fake;
}

beforeAll(async () => {
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
  await agent("trimmer", { strategy: "trim", max_input_tokens: 1200, keep_last: 4 });
  await agent("strict", { strategy: "none", max_input_tokens: 1024 });
  await agent("summarizer", { max_input_tokens: 2000, compact_at: 0.5, keep_last: 4 });
  await agent("reader", { max_input_tokens: 4000, max_tool_output_tokens: 300 }, { tools: { allow: ["dump"] } });
  const tool = await call("PUT", "/v1/tools/dump", {
    name: "dump",
    kind: "http",
    description: "Dumps a log",
    url: "https://tools.test/dump",
    parameters: { type: "object", properties: {} },
  });
  if (tool.status !== 201) throw new Error(JSON.stringify(tool.json));
});

describe("trim", () => {
  it("leaves the oldest items out with a note, and asks no model for a summary", async () => {
    const fake = model(() => answer("ok"));
    const id = await newSession("trimmer");
    await fill(id, 80);
    const run = await say(id, "Where is crate 3?");
    expect(run.json.run).toMatchObject({ status: "completed", output: "ok" });
    expect(fake.requests.filter(isSummary)).toEqual([]);
    const sent = fake.requests[0]!.body.messages;
    expect(sent[1]).toMatchObject({
      role: "system",
      content: expect.stringMatching(/^Earlier conversation, left out:\n\d+ earlier items were left out/),
    });
    expect(sent.some((m) => String(m.content).includes("crate 0 "))).toBe(false);
    expect(sent.at(-1)).toMatchObject({ role: "user", content: "Where is crate 3?" });
    const { compactions } = (await call("GET", `/v1/sessions/${id}/compactions`)).json;
    expect(compactions).toEqual([expect.objectContaining({ strategy: "trim", model: null, from_seq: 1 })]);
  });
});

describe("none", () => {
  it("fails the run with CONTEXT_TOO_LARGE before the model is asked, and keeps the message", async () => {
    const fake = model(() => answer("never"));
    const id = await newSession("strict");
    await fill(id, 80);
    const run = await say(id, "Anything?");
    expect(run.status).toBe(200);
    expect(run.json.run).toMatchObject({
      status: "failed",
      error: { code: "CONTEXT_TOO_LARGE", details: { max_input_tokens: 1024, strategy: "none" } },
    });
    expect(fake.requests).toEqual([]);
    const history = (await call("GET", `/v1/sessions/${id}/messages?limit=500`)).json.items;
    expect(history.at(-1)).toMatchObject({ role: "user", content: "Anything?" });
  });
});

describe("a summary that fails", () => {
  it("within the budget, the turn goes out uncompacted and nothing is stored", async () => {
    const fake = model((req) => (isSummary(req) ? httpError(500) : answer("answered anyway")));
    const id = await newSession("summarizer");
    await fill(id, 80);
    const run = await say(id, "Still there?");
    expect(run.json.run).toMatchObject({ status: "completed", output: "answered anyway" });
    expect(fake.requests.filter(isSummary)).toHaveLength(1);
    expect((await call("GET", `/v1/sessions/${id}/compactions`)).json.compactions).toEqual([]);
  });

  it("past the budget, the run fails with the model's error", async () => {
    const fake = model((req) => (isSummary(req) ? httpError(500) : answer("never")));
    const id = await newSession("summarizer");
    await fill(id, 160);
    const run = await say(id, "Still there?");
    expect(run.json.run).toMatchObject({ status: "failed", error: { code: "MODEL_ERROR" } });
    expect(fake.requests.every(isSummary)).toBe(true);
  });
});

describe("a history far past the budget", () => {
  it("is summarized in pieces, each request within the budget, the summary rolled through them", async () => {
    const fake = model((req) => (isSummary(req) ? answer(`Summary ${fake.requests.length}.`) : answer("caught up")));
    const id = await newSession("summarizer");
    await fill(id, 400);
    const run = await say(id, "Where were we?");
    expect(run.json.run).toMatchObject({ status: "completed", output: "caught up" });
    const pieces = fake.requests.filter(isSummary);
    expect(pieces.length).toBeGreaterThan(2);
    for (const req of fake.requests) expect(wireInputTokens(req)).toBeLessThanOrEqual(2000);
    // Each piece after the first reads the summary the one before it wrote.
    pieces.slice(1).forEach((req, i) => {
      const before = fake.requests.indexOf(pieces[i]!) + 1;
      expect(lastUserMessage(req)).toMatch(new RegExp(`^Summary so far:\nSummary ${before}.`));
    });
    const { compactions } = (await call("GET", `/v1/sessions/${id}/compactions`)).json;
    expect(compactions).toHaveLength(1);
    expect(compactions[0]).toMatchObject({
      from_seq: 1,
      content: `Summary ${fake.requests.indexOf(pieces.at(-1)!) + 1}.`,
    });
  });
});

describe("read_tool_output", () => {
  it("reads a cut output on from the marker's offset, each piece within the agent's limit", async () => {
    const log = Array.from({ length: 400 }, (_, i) => `event ${i}: door ${i % 9} opened`).join("\n");
    llmServer.use(http.post("https://tools.test/dump", () => HttpResponse.text(log)));
    const fake = model((req) => {
      const last = req.body.messages.at(-1)!;
      if (last.role === "user") return callTool("dump", {});
      const marker = /Call read_tool_output with (\{[^}]*\})/.exec(String(last.content));
      const reads = req.body.messages.filter((m) => m.role === "tool").length;
      if (marker && reads < 3) return callTool("read_tool_output", JSON.parse(marker[1]!));
      return answer("done reading");
    });
    const id = await newSession("reader");
    const run = await say(id, "Dump the log");
    expect(run.json.run).toMatchObject({ status: "completed", output: "done reading" });
    const outputs = fake.requests
      .at(-1)!
      .body.messages.filter((m) => m.role === "tool")
      .map((m) => String(m.content));
    expect(outputs).toHaveLength(3);
    // Each piece starts where the one before it stopped.
    let offset = 0;
    for (const piece of outputs) {
      const text = piece.split("\n…[cut:")[0]!;
      expect(log.slice(offset, offset + text.length)).toBe(text);
      offset = Number(/"offset": (\d+)\}/.exec(piece)![1]);
    }
    for (const req of fake.requests) expect(protocolErrors(req)).toEqual([]);
    // A call to an output that is not there is answered with an error the model can read.
    const history = (await call("GET", `/v1/sessions/${id}/messages?limit=500`)).json.items;
    expect(history.filter((m: { tool_name?: string }) => m.tool_name === "read_tool_output")).toHaveLength(2);
  });
});

describe("offline", () => {
  it("the local provider compacts with an extractive digest that keeps the facts", async () => {
    const put = await call(
      "PUT",
      "/v1/agents/notary",
      { name: "notary", description: "Takes notes", memory: { max_input_tokens: 1500, keep_last: 4 } },
      { key: BETA_KEY },
    );
    expect(put.status).toBeLessThan(300);
    const id = (await call("POST", "/v1/sessions", { agent: "notary" }, { key: BETA_KEY })).json.id as string;
    const first = await call(
      "POST",
      `/v1/sessions/${id}/messages`,
      { role: "user", content: "My claim number is 55-1234 for Ada Quill.", run: false },
      { key: BETA_KEY },
    );
    expect(first.status).toBe(201);
    await fill(id, 70, BETA_KEY);
    const run = await call(
      "POST",
      `/v1/sessions/${id}/messages`,
      { role: "user", content: "Thanks" },
      { key: BETA_KEY },
    );
    expect(run.json.run).toMatchObject({ status: "completed" });
    const { compactions } = (await call("GET", `/v1/sessions/${id}/compactions`, undefined, { key: BETA_KEY })).json;
    expect(compactions).toHaveLength(1);
    expect(compactions[0]).toMatchObject({ strategy: "summarize", model: "local", from_seq: 1 });
    expect(compactions[0].content).toContain("55-1234");
  });
});
