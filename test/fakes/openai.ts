import { delay, type HttpHandler, HttpResponse, http } from "msw";

/**
 * A small OpenAI-compatible Chat Completions fake for msw. It speaks the real wire protocol
 * (a `chat.completion` with `tool_calls`, OpenAI error bodies) and records every request so
 * tests can assert on what Relay sent. Install it with `llmServer.use(fake.handler)`.
 */

/** One request as the fake received it. */
export interface RecordedRequest {
  url: string;
  /** The Authorization header, verbatim (null when absent). */
  authorization: string | null;
  headers: Record<string, string>;
  /** The parsed JSON body: model, messages, tools, tool_choice, … */
  body: WireChatRequest;
}

export interface WireChatRequest {
  model: string;
  messages: { role: string; content: string | null; [key: string]: unknown }[];
  tools?: { type: "function"; function: { name: string; description: string; parameters: Record<string, unknown> } }[];
  tool_choice?: string;
  [key: string]: unknown;
}

/** What the fake answers. Arguments given as a string are sent verbatim (for malformed-argument cases). */
export type FakeReply =
  | { kind: "tools"; calls: { name: string; arguments?: unknown }[] }
  | { kind: "content"; content: string }
  | { kind: "http"; status: number; body?: unknown }
  | { kind: "garbage"; text: string }
  | { kind: "delay"; ms: number; reply: FakeReply };

/** One call to `name`; `args` defaults to `{ reason: "fake choice" }`. */
export const callTool = (name: string, args: unknown = { reason: "fake choice" }): FakeReply => ({
  kind: "tools",
  calls: [{ name, arguments: args }],
});
/** Several calls in one turn, in order. */
export const callTools = (...calls: { name: string; arguments?: unknown }[]): FakeReply => ({ kind: "tools", calls });
/** Text only, no tool call. */
export const answer = (content: string): FakeReply => ({ kind: "content", content });
/** An HTTP error with an OpenAI error body (or `body` when given). */
export const httpError = (status: number, body?: unknown): FakeReply =>
  body === undefined ? { kind: "http", status } : { kind: "http", status, body };
/** A 200 whose body is not JSON. */
export const garbage = (text = "<html>upstream proxy error</html>"): FakeReply => ({ kind: "garbage", text });
/** `reply`, after `ms` milliseconds. */
export const delayed = (ms: number, reply: FakeReply): FakeReply => ({ kind: "delay", ms, reply });

/** The last user message's text in a recorded request ("" when there is none). */
export function lastUserMessage(req: RecordedRequest): string {
  const user = req.body.messages.filter((m) => m.role === "user").at(-1);
  return typeof user?.content === "string" ? user.content : "";
}

export interface FakeOpenAIOptions {
  /** Default https://api.openai.com/v1. */
  baseUrl?: string;
  /** Decides the answer from the request; default: call the first offered tool. */
  respond?: (req: RecordedRequest) => FakeReply | Promise<FakeReply>;
}

export interface FakeOpenAI {
  handler: HttpHandler;
  requests: RecordedRequest[];
}

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "invalid_request_error",
  429: "rate_limit_exceeded",
  500: "server_error",
};

let completionSeq = 0;

function completion(model: string, reply: Extract<FakeReply, { kind: "tools" | "content" }>): Record<string, unknown> {
  completionSeq += 1;
  const message =
    reply.kind === "tools"
      ? {
          role: "assistant",
          content: null,
          refusal: null,
          tool_calls: reply.calls.map((call, i) => ({
            id: `call_fake${completionSeq}x${i}`,
            type: "function",
            function: {
              name: call.name,
              arguments:
                typeof call.arguments === "string"
                  ? call.arguments
                  : JSON.stringify(call.arguments ?? { reason: "fake choice" }),
            },
          })),
        }
      : { role: "assistant", content: reply.content, refusal: null };
  return {
    id: `chatcmpl-fake${completionSeq}`,
    object: "chat.completion",
    created: 1_767_225_600,
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: reply.kind === "tools" ? "tool_calls" : "stop" }],
    usage: { prompt_tokens: 42, completion_tokens: 7, total_tokens: 49 },
    system_fingerprint: "fp_fake",
  };
}

async function toResponse(model: string, reply: FakeReply): Promise<Response> {
  switch (reply.kind) {
    case "delay":
      await delay(reply.ms);
      return toResponse(model, reply.reply);
    case "garbage":
      return new HttpResponse(reply.text, { status: 200, headers: { "content-type": "application/json" } });
    case "http":
      return HttpResponse.json(
        reply.body ?? {
          error: {
            message: `fake upstream error ${reply.status}`,
            type: ERROR_TYPES[reply.status] ?? "api_error",
            param: null,
            code: null,
          },
        },
        { status: reply.status },
      );
    case "tools":
    case "content":
      return HttpResponse.json(completion(model, reply));
  }
}

/** An OpenAI-compatible fake at `${baseUrl}/chat/completions`. */
export function fakeOpenAI(options: FakeOpenAIOptions = {}): FakeOpenAI {
  const baseUrl = (options.baseUrl ?? "https://api.openai.com/v1").replace(/\/+$/, "");
  const requests: RecordedRequest[] = [];
  const respond =
    options.respond ??
    ((req: RecordedRequest): FakeReply => {
      const first = req.body.tools?.[0];
      return first ? callTool(first.function.name) : answer("no tools were offered");
    });
  const handler = http.post(`${baseUrl}/chat/completions`, async ({ request }) => {
    const body = (await request.json()) as WireChatRequest;
    const recorded: RecordedRequest = {
      url: request.url,
      authorization: request.headers.get("authorization"),
      headers: Object.fromEntries(request.headers),
      body,
    };
    requests.push(recorded);
    return toResponse(body.model, await respond(recorded));
  });
  return { handler, requests };
}
