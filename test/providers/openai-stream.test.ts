import { describe, expect, it } from "vitest";
import { OpenAIProvider } from "../../src/providers/openai";
import { type ChatRequest, ProviderError } from "../../src/providers/types";
import {
  answer,
  callTools,
  delayed,
  type FakeReply,
  fakeOpenAI,
  httpError,
  rawStream,
  streamChunks,
  whole,
} from "../fakes/openai";
import { llmServer } from "../fakes/server";

/**
 * The OpenAI-compatible provider streaming (`stream: true`): the fake answers with the
 * `chat.completion.chunk` events OpenAI sends — text in pieces, each tool call's arguments in
 * pieces, usage in a last chunk, `[DONE]` — and the provider hands out the text as it comes
 * and assembles the rest.
 */

const BASE = "https://stream.test/v1";
const request: ChatRequest = {
  model: "gpt-4.1-mini",
  messages: [{ role: "user", content: "hello" }],
  tools: [{ type: "function", function: { name: "lookup", description: "Look up", parameters: { type: "object" } } }],
  tool_choice: "auto",
};
const provider = new OpenAIProvider({ apiKey: "sk-test", baseUrl: BASE });

function serve(...replies: FakeReply[]) {
  const fake = fakeOpenAI({ baseUrl: BASE, respond: () => replies.shift() ?? httpError(500) });
  llmServer.use(fake.handler);
  return fake;
}

async function collect(): Promise<{ deltas: string[]; response: Awaited<ReturnType<OpenAIProvider["stream"]>> }> {
  const deltas: string[] = [];
  const response = await provider.stream(request, new AbortController().signal, (d) => deltas.push(d));
  return { deltas, response };
}

describe("streaming from an OpenAI-compatible endpoint", () => {
  it("asks for a stream with usage, hands out the text in pieces, and answers the whole", async () => {
    const fake = serve(answer("The refund is on its way."));
    const { deltas, response } = await collect();
    expect(fake.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join("")).toBe("The refund is on its way.");
    expect(response).toEqual({
      content: "The refund is on its way.",
      tool_calls: [],
      usage: { prompt_tokens: 42, completion_tokens: 7, total_tokens: 49 },
      streamed: true,
      finish_reasons: ["stop"],
      model: "gpt-4.1-mini",
      first_chunk_ms: expect.any(Number),
    });
  });

  it("says why the model stopped and which model answered, as the chunks name them", async () => {
    // A server answers with the dated version of the model asked for.
    serve(rawStream(streamChunks("gpt-4.1-mini-2025-04-14", { kind: "tools", calls: [{ name: "lookup" }] })));
    const { response } = await collect();
    expect(response).toMatchObject({ finish_reasons: ["tool_calls"], model: "gpt-4.1-mini-2025-04-14" });
  });

  it("times the first chunk from the request: a server slow to start is seen in it", async () => {
    serve(delayed(60, answer("Late, but here.")));
    const { response } = await collect();
    expect(response.first_chunk_ms).toBeGreaterThanOrEqual(60);
  });

  it("a stream that names neither a finish reason nor a model says neither", async () => {
    const chunks = streamChunks("m", { kind: "content", content: "Plain." }).map((data) => {
      if (data === "[DONE]") return data;
      const { model: _model, ...rest } = JSON.parse(data);
      return JSON.stringify({
        ...rest,
        choices: rest.choices.map((c: Record<string, unknown>) => ({ ...c, finish_reason: null })),
      });
    });
    serve(rawStream(chunks));
    const { response } = await collect();
    expect(response.content).toBe("Plain.");
    expect(response.finish_reasons).toBeUndefined();
    expect(response.model).toBeUndefined();
  });

  it("assembles tool calls whose arguments arrive split over several chunks, in the model's order", async () => {
    serve(
      callTools(
        { name: "lookup", arguments: { order: "A-1234", note: "split me into pieces" } },
        { name: "transfer_to_billing", arguments: { reason: "refund" } },
      ),
    );
    const { deltas, response } = await collect();
    expect(deltas).toEqual([]);
    expect(response.tool_calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ["lookup", { order: "A-1234", note: "split me into pieces" }],
      ["transfer_to_billing", { reason: "refund" }],
    ]);
    expect(response.tool_calls[0]!.id).toMatch(/^call_fake/);
    expect(response.streamed).toBe(true);
  });

  it("a server that answers whole instead is taken as one message, streamed: false", async () => {
    serve(whole(answer("all at once")));
    const { deltas, response } = await collect();
    expect(deltas).toEqual([]);
    expect(response).toMatchObject({ content: "all at once", streamed: false, finish_reasons: ["stop"] });
    // No stream, so no first chunk.
    expect(response.first_chunk_ms).toBeUndefined();
  });

  it("an HTTP error is an http ProviderError, as without streaming", async () => {
    serve(httpError(429));
    await expect(collect()).rejects.toMatchObject({ kind: "http", status: 429 });
  });

  describe("a stream that goes wrong: a malformed ProviderError after the text that came", () => {
    const chunks = streamChunks("m", { kind: "content", content: "Half an answer and" });

    it("cut in the middle (no finish, no [DONE])", async () => {
      serve(rawStream(chunks.slice(0, 4)));
      const deltas: string[] = [];
      const failed = provider.stream(request, new AbortController().signal, (d) => deltas.push(d));
      await expect(failed).rejects.toThrow(/ended before the model finished/);
      await expect(failed).rejects.toBeInstanceOf(ProviderError);
      // The first chunk carries the role; the next three pieces of text came before the cut.
      expect(deltas.join("")).toBe("Half an answ");
    });

    it("a chunk that is not JSON", async () => {
      serve(rawStream([...chunks.slice(0, 3), "{not json", ...chunks.slice(3)]));
      await expect(collect()).rejects.toMatchObject({ kind: "malformed", message: expect.stringMatching(/not JSON/) });
    });

    it("a tool call whose arguments never close", async () => {
      const open = streamChunks("m", { kind: "tools", calls: [{ name: "lookup", arguments: '{"order": "A-12' }] });
      serve(rawStream(open));
      await expect(collect()).rejects.toMatchObject({
        kind: "malformed",
        message: expect.stringMatching(/arguments of tool call 'lookup' are not complete JSON/),
      });
    });
  });
});
