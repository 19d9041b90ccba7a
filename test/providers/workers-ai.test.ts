import { describe, expect, it } from "vitest";
import { type ChatRequest, ProviderError } from "../../src/providers/types";
import { type AiBinding, WorkersAIProvider } from "../../src/providers/workers-ai";

const tools: ChatRequest["tools"] = [
  {
    type: "function",
    function: { name: "transfer_to_tech", description: "Hand off to Tech", parameters: { type: "object" } },
  },
];

const request = (overrides: Partial<ChatRequest> = {}): ChatRequest => ({
  model: "@cf/meta/llama-3.3-70b-instruct-fp8-fast",
  messages: [
    { role: "system", content: "route it" },
    { role: "user", content: "my build fails" },
  ],
  tools,
  tool_choice: "required",
  ...overrides,
});

interface Call {
  model: string;
  inputs: Record<string, unknown>;
  options?: { signal?: AbortSignal };
}

/** A fake `env.AI`: records calls and answers with `reply` (a value, or a function of the call). */
function fakeAi(reply: unknown | ((call: Call) => Promise<unknown>)): AiBinding & { calls: Call[] } {
  const calls: Call[] = [];
  return {
    calls,
    run(model, inputs, options) {
      const call = options === undefined ? { model, inputs } : { model, inputs, options };
      calls.push(call);
      return typeof reply === "function" ? (reply as (c: Call) => Promise<unknown>)(call) : Promise.resolve(reply);
    },
  };
}

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

const signal = (): AbortSignal => AbortSignal.timeout(5_000);

describe("WorkersAIProvider with a fake AI binding", () => {
  it("runs the model with messages and tools and passes the signal along", async () => {
    const ai = fakeAi({ response: "", tool_calls: [] });
    const s = signal();
    await new WorkersAIProvider(ai).complete(request(), s);
    expect(ai.calls).toHaveLength(1);
    expect(ai.calls[0]?.model).toBe("@cf/meta/llama-3.3-70b-instruct-fp8-fast");
    expect(ai.calls[0]?.inputs).toEqual({ messages: request().messages, tools });
    expect(ai.calls[0]?.options?.signal).toBe(s);
  });

  it("sends no tools when tool_choice is none", async () => {
    const ai = fakeAi({ response: "hello" });
    await new WorkersAIProvider(ai).complete(request({ tool_choice: "none" }), signal());
    expect(ai.calls[0]?.inputs).not.toHaveProperty("tools");
  });

  it("names calls the model left unnamed uniquely, so a later turn's call is never taken for an earlier one", async () => {
    const ai = fakeAi({ response: null, tool_calls: [{ name: "transfer_to_tech", arguments: "{}" }] });
    const provider = new WorkersAIProvider(ai);
    const first = await provider.complete(request(), signal());
    const second = await provider.complete(request(), signal());
    expect(first.tool_calls[0]!.id).not.toBe(second.tool_calls[0]!.id);
  });

  it("normalises object arguments (legacy flat calls) to JSON text", async () => {
    const ai = fakeAi({
      response: null,
      tool_calls: [{ name: "transfer_to_tech", arguments: { reason: "build" } }],
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
    });
    const response = await new WorkersAIProvider(ai).complete(request(), signal());
    expect(response).toEqual({
      tool_calls: [
        {
          id: expect.stringMatching(/^call_workers_ai_0_[0-9a-z]{26}$/),
          name: "transfer_to_tech",
          arguments: '{"reason":"build"}',
        },
      ],
      content: null,
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
    });
  });

  it("keeps string arguments verbatim, valid or not", async () => {
    const ai = fakeAi({
      tool_calls: [
        { name: "transfer_to_tech", arguments: '{"reason":"x"}' },
        { name: "transfer_to_tech", arguments: "{oops" },
      ],
    });
    const response = await new WorkersAIProvider(ai).complete(request(), signal());
    expect(response.tool_calls.map((c) => c.arguments)).toEqual(['{"reason":"x"}', "{oops"]);
  });

  it("reads OpenAI-shaped nested calls with their ids", async () => {
    const ai = fakeAi({
      tool_calls: [
        {
          id: "chatcmpl-tool-1",
          type: "function",
          function: { name: "transfer_to_tech", arguments: '{"reason":"n"}' },
        },
      ],
    });
    const response = await new WorkersAIProvider(ai).complete(request(), signal());
    expect(response.tool_calls).toEqual([
      { id: "chatcmpl-tool-1", name: "transfer_to_tech", arguments: '{"reason":"n"}' },
    ]);
  });

  it("reads a whole chat.completion when the model answers with one", async () => {
    const ai = fakeAi({
      choices: [
        {
          message: {
            content: null,
            tool_calls: [{ id: "c1", type: "function", function: { name: "transfer_to_tech", arguments: "{}" } }],
          },
        },
      ],
    });
    const response = await new WorkersAIProvider(ai).complete(request(), signal());
    expect(response.tool_calls).toEqual([{ id: "c1", name: "transfer_to_tech", arguments: "{}" }]);
  });

  it("says why the model stopped and which model answered when a chat.completion names them", async () => {
    const ai = fakeAi({
      model: "@cf/meta/llama-4-scout-17b-16e-instruct",
      choices: [{ message: { content: "Done." }, finish_reason: "stop" }],
    });
    const response = await new WorkersAIProvider(ai).complete(request(), signal());
    expect(response).toMatchObject({ finish_reasons: ["stop"], model: "@cf/meta/llama-4-scout-17b-16e-instruct" });
    // The older shape says neither.
    const older = await new WorkersAIProvider(fakeAi({ response: "Done." })).complete(request(), signal());
    expect(older).toEqual({ tool_calls: [], content: "Done." });
  });

  it("returns content only when the model answers in text", async () => {
    const response = await new WorkersAIProvider(fakeAi({ response: "Could you say more?" })).complete(
      request(),
      signal(),
    );
    expect(response).toEqual({ tool_calls: [], content: "Could you say more?" });
  });

  it("reports a thrown binding error as an http error", async () => {
    const ai = fakeAi(() => Promise.reject(new Error("5007: No such model")));
    const error = await failure(new WorkersAIProvider(ai).complete(request(), signal()));
    expect(error.kind).toBe("http");
    expect(error.message).toContain("No such model");
  });

  it.each([
    ["a stream", new ReadableStream()],
    ["a tool call without a name", { tool_calls: [{ arguments: {} }] }],
    ["nothing", undefined],
  ])("reports %s as malformed", async (_label, result) => {
    const error = await failure(new WorkersAIProvider(fakeAi(result)).complete(request(), signal()));
    expect(error.kind).toBe("malformed");
  });

  it("times out on the signal even when the binding ignores it", async () => {
    const ai = fakeAi(() => new Promise(() => {}));
    const error = await failure(new WorkersAIProvider(ai).complete(request(), AbortSignal.timeout(20)));
    expect(error.kind).toBe("timeout");
    expect(error.message).toContain("timed out");
  });
});

/** The server-sent events Workers AI streams: `{ response }` pieces, then `[DONE]` (or not, when `cut`). */
function sseOf(pieces: string[], cut = false): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const events = [
    ...pieces.map((p) => `data: ${JSON.stringify({ response: p })}\n\n`),
    ...(cut ? [] : ["data: [DONE]\n\n"]),
  ];
  return new ReadableStream({
    start(controller) {
      for (const e of events) controller.enqueue(encoder.encode(e));
      controller.close();
    },
  });
}

describe("streaming through the Workers AI binding", () => {
  const chat = request({ tools: [], tool_choice: "auto" });

  it("asks for a stream and hands out each { response } piece as it comes", async () => {
    const ai = fakeAi(sseOf(["Your ", "build ", "fails ", "because…"]));
    const deltas: string[] = [];
    const response = await new WorkersAIProvider(ai).stream(chat, new AbortController().signal, (d) => deltas.push(d));
    expect(ai.calls[0]!.inputs).toMatchObject({ stream: true });
    expect(deltas).toEqual(["Your ", "build ", "fails ", "because…"]);
    expect(response).toEqual({
      tool_calls: [],
      content: "Your build fails because…",
      streamed: true,
      first_chunk_ms: expect.any(Number),
    });
  });

  it("times the first piece from the call: a binding slow to start is seen in it", async () => {
    const slow = fakeAi(() => new Promise((resolve) => setTimeout(() => resolve(sseOf(["Late."])), 60)));
    const response = await new WorkersAIProvider(slow).stream(chat, new AbortController().signal, () => undefined);
    expect(response.first_chunk_ms).toBeGreaterThanOrEqual(60);
  });

  it("a request with tools is answered whole, streamed: false (the binding streams text, not calls)", async () => {
    const ai = fakeAi({ response: "", tool_calls: [{ name: "transfer_to_tech", arguments: { reason: "build" } }] });
    const deltas: string[] = [];
    const response = await new WorkersAIProvider(ai).stream(
      request({ tool_choice: "auto" }),
      new AbortController().signal,
      (d) => deltas.push(d),
    );
    expect(ai.calls[0]!.inputs.stream).toBeUndefined();
    expect(deltas).toEqual([]);
    expect(response).toMatchObject({ tool_calls: [{ name: "transfer_to_tech" }], streamed: false });
  });

  it("a stream cut before [DONE] is malformed, after the pieces that came", async () => {
    const deltas: string[] = [];
    const failed = new WorkersAIProvider(fakeAi(sseOf(["half ", "an "], true))).stream(
      chat,
      new AbortController().signal,
      (d) => deltas.push(d),
    );
    await expect(failed).rejects.toMatchObject({ kind: "malformed", message: expect.stringMatching(/ended before/) });
    expect(deltas).toEqual(["half ", "an "]);
  });

  it("a model that answers whole to a stream request is taken as one message", async () => {
    const response = await new WorkersAIProvider(fakeAi({ response: "all at once" })).stream(
      chat,
      new AbortController().signal,
      () => undefined,
    );
    expect(response).toEqual({ tool_calls: [], content: "all at once", streamed: false });
  });
});
