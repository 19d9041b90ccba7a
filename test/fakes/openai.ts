import { delay, type HttpHandler, HttpResponse, http } from "msw";

/**
 * A small OpenAI-compatible Chat Completions fake for msw. It speaks the real wire protocol
 * (a `chat.completion` with `tool_calls`, OpenAI error bodies; with `stream: true`, the
 * `chat.completion.chunk` server-sent events OpenAI sends: text in pieces, each tool call's
 * arguments in pieces, usage in a last chunk, then `[DONE]`) and records every request so
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
  | { kind: "tools"; calls: { name: string; arguments?: unknown }[]; content?: string }
  | { kind: "content"; content: string }
  | { kind: "http"; status: number; body?: unknown }
  | { kind: "garbage"; text: string }
  | { kind: "delay"; ms: number; reply: FakeReply }
  /** Raw SSE `data:` payloads as given (a chunk that is not JSON, a stream cut short), `gapMs` apart. */
  | { kind: "raw-stream"; data: string[]; gapMs?: number }
  /** `reply` answered whole even when the request asked for a stream (a server that cannot stream). */
  | { kind: "whole"; reply: FakeReply }
  /** `reply` streamed with `gapMs` between chunks and its text in pieces of `pieceChars`. */
  | { kind: "paced"; reply: FakeReply; gapMs: number; pieceChars?: number };

/** One call to `name`; `args` defaults to `{ reason: "fake choice" }`. */
export const callTool = (name: string, args: unknown = { reason: "fake choice" }): FakeReply => ({
  kind: "tools",
  calls: [{ name, arguments: args }],
});
/** Several calls in one turn, in order. */
export const callTools = (...calls: { name: string; arguments?: unknown }[]): FakeReply => ({ kind: "tools", calls });
/** Text, then tool calls, in one answer. */
export const sayAndCall = (content: string, ...calls: { name: string; arguments?: unknown }[]): FakeReply => ({
  kind: "tools",
  calls,
  content,
});
/** Text only, no tool call. */
export const answer = (content: string): FakeReply => ({ kind: "content", content });
/** An HTTP error with an OpenAI error body (or `body` when given). */
export const httpError = (status: number, body?: unknown): FakeReply =>
  body === undefined ? { kind: "http", status } : { kind: "http", status, body };
/** A 200 whose body is not JSON. */
export const garbage = (text = "<html>upstream proxy error</html>"): FakeReply => ({ kind: "garbage", text });
/** `reply`, after `ms` milliseconds. */
export const delayed = (ms: number, reply: FakeReply): FakeReply => ({ kind: "delay", ms, reply });

/** Raw stream payloads (see FakeReply `raw-stream`). */
export const rawStream = (data: string[], gapMs = 0): FakeReply => ({ kind: "raw-stream", data, gapMs });
/** `reply` as one whole completion even to a streaming request. */
export const whole = (reply: FakeReply): FakeReply => ({ kind: "whole", reply });
/** `reply` streamed slowly: `gapMs` between chunks. */
export const paced = (reply: FakeReply, gapMs: number, pieceChars?: number): FakeReply =>
  pieceChars === undefined ? { kind: "paced", reply, gapMs } : { kind: "paced", reply, gapMs, pieceChars };

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
  /** The `completion_tokens` the usage reports for an answer; default 7 (with 42 prompt tokens). */
  completionTokens?: (reply: Extract<FakeReply, { kind: "tools" | "content" }>) => number;
}

type Usage = { prompt_tokens: number; completion_tokens: number; total_tokens: number };
const FIXED_USAGE: Usage = { prompt_tokens: 42, completion_tokens: 7, total_tokens: 49 };

export interface FakeOpenAI {
  handler: HttpHandler;
  requests: RecordedRequest[];
  /** How many of its requests the client aborted (a stream stopped before its end included). */
  aborted(): number;
}

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "invalid_request_error",
  429: "rate_limit_exceeded",
  500: "server_error",
};

let completionSeq = 0;

function completion(
  model: string,
  reply: Extract<FakeReply, { kind: "tools" | "content" }>,
  usage: Usage = FIXED_USAGE,
): Record<string, unknown> {
  completionSeq += 1;
  const message =
    reply.kind === "tools"
      ? {
          role: "assistant",
          content: reply.content ?? null,
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
    usage,
    system_fingerprint: "fp_fake",
  };
}

/** Text in pieces of `size` characters (code points, so no surrogate pair is split). */
function pieces(text: string, size: number): string[] {
  const chars = [...text];
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
  return out;
}

/** The `chat.completion.chunk` payloads OpenAI streams for `reply`: role, text or calls in pieces, finish, usage. */
export function streamChunks(
  model: string,
  reply: Extract<FakeReply, { kind: "tools" | "content" }>,
  pieceChars = 4,
): string[] {
  completionSeq += 1;
  const id = `chatcmpl-fake${completionSeq}`;
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    JSON.stringify({ id, object: "chat.completion.chunk", created: 1_767_225_600, model, choices, ...extra });
  const delta = (d: Record<string, unknown>, finish: string | null = null) => ({
    index: 0,
    delta: d,
    logprobs: null,
    finish_reason: finish,
  });
  const out = [chunk([delta({ role: "assistant", content: "" })])];
  for (const piece of pieces(reply.content ?? "", pieceChars)) out.push(chunk([delta({ content: piece })]));
  if (reply.kind === "tools") {
    reply.calls.forEach((call, index) => {
      const args =
        typeof call.arguments === "string"
          ? call.arguments
          : JSON.stringify(call.arguments ?? { reason: "fake choice" });
      out.push(
        chunk([
          delta({
            tool_calls: [
              {
                index,
                id: `call_fake${completionSeq}x${index}`,
                type: "function",
                function: { name: call.name, arguments: "" },
              },
            ],
          }),
        ]),
      );
      for (const piece of pieces(args, pieceChars))
        out.push(chunk([delta({ tool_calls: [{ index, function: { arguments: piece } }] })]));
    });
  }
  out.push(chunk([delta({}, reply.kind === "tools" ? "tool_calls" : "stop")]));
  out.push(chunk([], { usage: { prompt_tokens: 42, completion_tokens: 7, total_tokens: 49 } }));
  out.push("[DONE]");
  return out;
}

type UsageOf = (reply: Extract<FakeReply, { kind: "tools" | "content" }>) => Usage;

let cancelled = 0;

/** A `text/event-stream` of `data` payloads, `gapMs` apart. */
function sse(data: string[], gapMs = 0): Response {
  const encoder = new TextEncoder();
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (i >= data.length) {
        controller.close();
        return;
      }
      if (gapMs > 0 && i > 0) await delay(gapMs);
      controller.enqueue(encoder.encode(`data: ${data[i]}\n\n`));
      i += 1;
    },
    cancel() {
      cancelled += 1;
    },
  });
  return new HttpResponse(body, { status: 200, headers: { "content-type": "text/event-stream" } });
}

async function toResponse(model: string, reply: FakeReply, stream = false, usage?: UsageOf): Promise<Response> {
  switch (reply.kind) {
    case "delay":
      await delay(reply.ms);
      return toResponse(model, reply.reply, stream, usage);
    case "whole":
      return toResponse(model, reply.reply, false, usage);
    case "raw-stream":
      return sse(reply.data, reply.gapMs);
    case "paced":
      if (!stream || (reply.reply.kind !== "tools" && reply.reply.kind !== "content"))
        return toResponse(model, reply.reply, stream, usage);
      return sse(streamChunks(model, reply.reply, reply.pieceChars), reply.gapMs);
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
      return stream ? sse(streamChunks(model, reply)) : HttpResponse.json(completion(model, reply, usage?.(reply)));
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
    request.signal.addEventListener("abort", () => {
      abortedRequests += 1;
    });
    const body = (await request.json()) as WireChatRequest;
    const recorded: RecordedRequest = {
      url: request.url,
      authorization: request.headers.get("authorization"),
      headers: Object.fromEntries(request.headers),
      body,
    };
    requests.push(recorded);
    const usage: UsageOf | undefined = options.completionTokens
      ? (reply) => {
          const completion_tokens = options.completionTokens!(reply);
          return { prompt_tokens: 42, completion_tokens, total_tokens: 42 + completion_tokens };
        }
      : undefined;
    return toResponse(body.model, await respond(recorded), body.stream === true, usage);
  });
  let abortedRequests = 0;
  const baseline = cancelled;
  return { handler, requests, aborted: () => abortedRequests + cancelled - baseline };
}
