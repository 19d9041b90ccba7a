import { HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import { OpenAIProvider } from "../../src/providers/openai";
import { type ChatRequest, ProviderError } from "../../src/providers/types";
import { answer, callTool, callTools, delayed, fakeOpenAI, garbage, httpError, lastUserMessage } from "../fakes/openai";
import { llmServer } from "../fakes/server";

const tools: ChatRequest["tools"] = [
  {
    type: "function",
    function: {
      name: "transfer_to_billing",
      description: "Hand off to Billing",
      parameters: { type: "object", properties: {} },
    },
  },
  {
    type: "function",
    function: {
      name: "transfer_to_tech",
      description: "Hand off to Tech",
      parameters: { type: "object", properties: {} },
    },
  },
];

const request = (content = "I was charged twice", overrides: Partial<ChatRequest> = {}): ChatRequest => ({
  model: "gpt-4.1-mini",
  messages: [
    { role: "system", content: "route it" },
    { role: "user", content },
  ],
  tools,
  tool_choice: "required",
  ...overrides,
});

const provider = (baseUrl?: string): OpenAIProvider =>
  new OpenAIProvider(baseUrl === undefined ? { apiKey: "sk-test-123" } : { apiKey: "sk-test-123", baseUrl });

const signal = (): AbortSignal => AbortSignal.timeout(5_000);

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

describe("OpenAIProvider against the OpenAI-compatible fake", () => {
  it("posts model, messages, tools, tool_choice and a bearer key to /chat/completions", async () => {
    const fake = fakeOpenAI();
    llmServer.use(fake.handler);
    await provider().complete(request(), signal());
    expect(fake.requests).toHaveLength(1);
    const [sent] = fake.requests;
    expect(sent?.url).toBe("https://api.openai.com/v1/chat/completions");
    expect(sent?.authorization).toBe("Bearer sk-test-123");
    expect(sent?.headers["content-type"]).toContain("application/json");
    expect(sent?.body).toEqual({
      model: "gpt-4.1-mini",
      messages: [
        { role: "system", content: "route it" },
        { role: "user", content: "I was charged twice" },
      ],
      tools,
      tool_choice: "required",
    });
  });

  it("uses a custom base URL and ignores its trailing slash", async () => {
    const fake = fakeOpenAI({ baseUrl: "https://llm.example.test/v1" });
    llmServer.use(fake.handler);
    await provider("https://llm.example.test/v1/").complete(request(), signal());
    expect(fake.requests[0]?.url).toBe("https://llm.example.test/v1/chat/completions");
  });

  it("returns the wire tool calls with their ids, names and raw JSON arguments, plus usage", async () => {
    llmServer.use(
      fakeOpenAI({
        respond: (req) =>
          callTool(lastUserMessage(req).includes("charged") ? "transfer_to_billing" : "transfer_to_tech", {
            reason: "money",
          }),
      }).handler,
    );
    const response = await provider().complete(request(), signal());
    expect(response.content).toBeNull();
    expect(response.tool_calls).toHaveLength(1);
    expect(response.tool_calls[0]).toMatchObject({ name: "transfer_to_billing", arguments: '{"reason":"money"}' });
    expect(response.tool_calls[0]?.id).toMatch(/^call_/);
    expect(response.usage).toEqual({ prompt_tokens: 42, completion_tokens: 7, total_tokens: 49 });
  });

  it("keeps several tool calls in the model's order", async () => {
    llmServer.use(
      fakeOpenAI({ respond: () => callTools({ name: "transfer_to_tech" }, { name: "transfer_to_billing" }) }).handler,
    );
    const response = await provider().complete(request(), signal());
    expect(response.tool_calls.map((c) => c.name)).toEqual(["transfer_to_tech", "transfer_to_billing"]);
  });

  it("returns content and no tool calls when the model only talks", async () => {
    llmServer.use(fakeOpenAI({ respond: () => answer("Which team do you need?") }).handler);
    const response = await provider().complete(request(), signal());
    expect(response).toMatchObject({ tool_calls: [], content: "Which team do you need?", finish_reasons: ["stop"] });
  });

  it("says why the model stopped and which model answered, as the completion names them", async () => {
    llmServer.use(
      http.post("https://api.openai.com/v1/chat/completions", () =>
        HttpResponse.json({
          id: "chatcmpl-1",
          object: "chat.completion",
          created: 1_767_225_600,
          model: "gpt-4.1-mini-2025-04-14",
          choices: [{ index: 0, message: { role: "assistant", content: "Cut sh" }, finish_reason: "length" }],
        }),
      ),
    );
    const response = await provider().complete(request(), signal());
    expect(response).toMatchObject({ finish_reasons: ["length"], model: "gpt-4.1-mini-2025-04-14" });
    expect(response.first_chunk_ms).toBeUndefined();
  });

  it("a completion that names neither a finish reason nor a model says neither", async () => {
    llmServer.use(
      http.post("https://api.openai.com/v1/chat/completions", () =>
        HttpResponse.json({ choices: [{ message: { content: "Hi." } }] }),
      ),
    );
    const response = await provider().complete(request(), signal());
    expect(response).toEqual({ tool_calls: [], content: "Hi." });
  });

  it("passes malformed argument text through verbatim for the router to judge", async () => {
    llmServer.use(fakeOpenAI({ respond: () => callTool("transfer_to_tech", '{"reason": "unterminated') }).handler);
    const response = await provider().complete(request(), signal());
    expect(response.tool_calls[0]?.arguments).toBe('{"reason": "unterminated');
  });

  it("serialises assistant tool calls and tool results in the wire shape", async () => {
    const fake = fakeOpenAI({ respond: () => answer("done") });
    llmServer.use(fake.handler);
    await provider().complete(
      request("x", {
        messages: [
          { role: "user", content: "hi" },
          {
            role: "assistant",
            content: null,
            tool_calls: [{ id: "call_1", name: "transfer_to_tech", arguments: "{}" }],
          },
          { role: "tool", content: "ok", tool_call_id: "call_1" },
        ],
        tool_choice: "auto",
      }),
      signal(),
    );
    expect(fake.requests[0]?.body.messages).toEqual([
      { role: "user", content: "hi" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "transfer_to_tech", arguments: "{}" } }],
      },
      { role: "tool", content: "ok", tool_call_id: "call_1" },
    ]);
    expect(fake.requests[0]?.body.tool_choice).toBe("auto");
  });

  it("sends neither tools nor tool_choice when no tools are offered", async () => {
    const fake = fakeOpenAI();
    llmServer.use(fake.handler);
    await provider().complete(request("x", { tools: [] }), signal());
    expect(fake.requests[0]?.body).not.toHaveProperty("tools");
    expect(fake.requests[0]?.body).not.toHaveProperty("tool_choice");
  });

  it.each([500, 429, 401])(
    "turns HTTP %i into an http error with the status and the upstream message",
    async (status) => {
      llmServer.use(fakeOpenAI({ respond: () => httpError(status) }).handler);
      const error = await failure(provider().complete(request(), signal()));
      expect(error.kind).toBe("http");
      expect(error.status).toBe(status);
      expect(error.message).toContain(`HTTP ${status}`);
      expect(error.message).toContain(`fake upstream error ${status}`);
    },
  );

  it("quotes a short excerpt of a non-JSON error body", async () => {
    llmServer.use(fakeOpenAI({ respond: () => httpError(502, "x".repeat(5_000)) }).handler);
    const error = await failure(provider().complete(request(), signal()));
    expect(error).toMatchObject({ kind: "http", status: 502 });
    expect(error.message.length).toBeLessThan(300);
  });

  it("reports garbage JSON as malformed", async () => {
    llmServer.use(fakeOpenAI({ respond: () => garbage() }).handler);
    const error = await failure(provider().complete(request(), signal()));
    expect(error.kind).toBe("malformed");
    expect(error.message).toContain("not JSON");
  });

  it("reports JSON that is not a chat completion as malformed", async () => {
    llmServer.use(http.post("https://api.openai.com/v1/chat/completions", () => HttpResponse.json({ choices: [] })));
    const error = await failure(provider().complete(request(), signal()));
    expect(error.kind).toBe("malformed");
    expect(error.message).toContain("choices");
  });

  it("reports a refused connection as a network error", async () => {
    llmServer.use(http.post("https://api.openai.com/v1/chat/completions", () => HttpResponse.error()));
    const error = await failure(provider().complete(request(), signal()));
    expect(error.kind).toBe("network");
  });

  it("reports a deadline passed while waiting as a timeout", async () => {
    llmServer.use(fakeOpenAI({ respond: () => delayed(2_000, callTool("transfer_to_tech")) }).handler);
    const error = await failure(provider().complete(request(), AbortSignal.timeout(30)));
    expect(error.kind).toBe("timeout");
    expect(error.message).toContain("timed out");
  });

  it("does not call the upstream when the signal is already aborted", async () => {
    const fake = fakeOpenAI();
    llmServer.use(fake.handler);
    const controller = new AbortController();
    controller.abort();
    const error = await failure(provider().complete(request(), controller.signal));
    expect(error.kind).toBe("timeout");
    expect(error.message).toContain("aborted");
    expect(fake.requests).toHaveLength(0);
  });

  it("accepts compatible servers that omit call ids or send object arguments", async () => {
    llmServer.use(
      http.post("https://api.openai.com/v1/chat/completions", () =>
        HttpResponse.json({
          choices: [
            {
              message: {
                role: "assistant",
                tool_calls: [{ function: { name: "transfer_to_tech", arguments: { reason: "r" } } }],
              },
            },
          ],
        }),
      ),
    );
    const response = await provider().complete(request(), signal());
    expect(response.tool_calls).toEqual([
      {
        id: expect.stringMatching(/^call_openai_0_[0-9a-z]{26}$/),
        name: "transfer_to_tech",
        arguments: '{"reason":"r"}',
      },
    ]);
    expect(response.content).toBeNull();
    expect(response.usage).toBeUndefined();
  });
});
