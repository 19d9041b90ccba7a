/**
 * The OpenAI-compatible provider: Chat Completions over HTTPS (OpenAI itself, or any
 * endpoint that speaks the same protocol — Workers AI's REST API, vLLM, Ollama, gateways).
 */

import * as z from "zod";
import { readSse } from "../lib/sse";
import { traceHeaders } from "../telemetry/propagation";
import type { TraceContext } from "../telemetry/trace-context";
import { CompletionChunks } from "./chunks";
import { abortError, excerpt, raceAbort } from "./failures";
import { type ChatProvider, type ChatRequest, type ChatResponse, type OnText, ProviderError } from "./types";
import { describeIssue, toToolCalls, WireToolCall, WireUsage, wireMessage } from "./wire";

export const DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1";

export interface OpenAIProviderOptions {
  apiKey: string;
  /** Default {@link DEFAULT_OPENAI_BASE_URL}; a trailing slash is ignored. */
  baseUrl?: string;
}

// Lenient where compatible servers differ (missing ids, object arguments), strict where a
// completion would otherwise be meaningless (no choices, a tool call without a name).
const WireCompletion = z.object({
  model: z.string().nullish(),
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          tool_calls: z.array(WireToolCall).nullish(),
        }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: WireUsage.nullish(),
});

const WireError = z.object({ error: z.object({ message: z.string() }) });

/** Chat Completions over fetch: `POST {baseUrl}/chat/completions` with a bearer key. */
export class OpenAIProvider implements ChatProvider {
  readonly name = "openai" as const;
  readonly url: string;
  readonly #apiKey: string;

  constructor(options: OpenAIProviderOptions) {
    this.#apiKey = options.apiKey;
    this.url = `${(options.baseUrl ?? DEFAULT_OPENAI_BASE_URL).replace(/\/+$/, "")}/chat/completions`;
  }

  complete(req: ChatRequest, signal: AbortSignal): Promise<ChatResponse> {
    // fetch honours the signal itself; the race also covers a body read that does not.
    return raceAbort(this.#complete(req, signal), signal, this.name);
  }

  async #complete(req: ChatRequest, signal: AbortSignal): Promise<ChatResponse> {
    const response = await this.#post(wireBody(req), "application/json", signal, req.trace);
    return parseCompletion(await this.#wholeText(response, signal));
  }

  /**
   * The same completion with `stream: true`: the text handed to `onText` as the server sends
   * it, tool calls assembled from their pieces, usage from the final chunk. A server that
   * answers with one whole completion instead (no `text/event-stream`) is taken as such,
   * `streamed: false`. `first_chunk_ms` is the time from sending the request to the first
   * event of the stream.
   */
  stream(req: ChatRequest, signal: AbortSignal, onText: OnText): Promise<ChatResponse> {
    return raceAbort(this.#stream(req, signal, onText), signal, this.name);
  }

  async #stream(req: ChatRequest, signal: AbortSignal, onText: OnText): Promise<ChatResponse> {
    const body = { ...wireBody(req), stream: true, stream_options: { include_usage: true } };
    const sent = Date.now();
    const response = await this.#post(body, "text/event-stream, application/json", signal, req.trace);
    if (!response.ok || !(response.headers.get("content-type") ?? "").includes("text/event-stream") || !response.body)
      return { ...parseCompletion(await this.#wholeText(response, signal)), streamed: false };
    const chunks = new CompletionChunks(this.name);
    let done = false;
    let first: number | undefined;
    try {
      for await (const event of readSse(response.body)) {
        first ??= Date.now() - sent;
        if (event.data.trim() === "[DONE]") {
          done = true;
          break;
        }
        const delta = chunks.add(event.data);
        if (delta !== "") onText(delta);
      }
    } catch (error) {
      if (error instanceof ProviderError) throw error;
      throw this.#transportError(error, signal);
    }
    const answer: ChatResponse = { ...chunks.response(done), streamed: true };
    if (first !== undefined) answer.first_chunk_ms = first;
    return answer;
  }

  /** `POST {url}` with the key (and the run's trace); a transport failure is a ProviderError. */
  async #post(
    body: Record<string, unknown>,
    accept: string,
    signal: AbortSignal,
    trace: TraceContext | undefined,
  ): Promise<Response> {
    try {
      return await fetch(this.url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${this.#apiKey}`,
          "content-type": "application/json",
          accept,
          ...(trace ? traceHeaders(trace) : {}),
        },
        body: JSON.stringify(body),
        signal,
      });
    } catch (error) {
      throw this.#transportError(error, signal);
    }
  }

  /** A whole answer's body: an error's as an http ProviderError. */
  async #wholeText(response: Response, signal: AbortSignal): Promise<string> {
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw this.#transportError(error, signal);
    }
    if (!response.ok) throw httpError(response.status, text);
    return text;
  }

  #transportError(error: unknown, signal: AbortSignal): ProviderError {
    if (signal.aborted) return abortError(signal, this.name);
    const message = error instanceof Error ? error.message : String(error);
    return new ProviderError("network", `openai: ${excerpt(message)}`);
  }
}

/** A whole completion's body, parsed. */
function parseCompletion(text: string): ChatResponse {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ProviderError("malformed", `openai: response is not JSON: ${excerpt(text, 120)}`);
  }
  const parsed = WireCompletion.safeParse(json);
  if (!parsed.success)
    throw new ProviderError("malformed", `openai: not a chat completion: ${describeIssue(parsed.error)}`);
  return toResponse(parsed.data);
}

function wireBody(req: ChatRequest): Record<string, unknown> {
  const body: Record<string, unknown> = { model: req.model, messages: req.messages.map(wireMessage) };
  // OpenAI refuses tool_choice without tools, so an empty tool list sends neither.
  if (req.tools.length > 0) {
    body.tools = req.tools;
    body.tool_choice = req.tool_choice;
  }
  return body;
}

function httpError(status: number, body: string): ProviderError {
  let detail = body;
  try {
    const parsed = WireError.safeParse(JSON.parse(body));
    if (parsed.success) detail = parsed.data.error.message;
  } catch {
    // Not JSON: the raw body excerpt is the best description there is.
  }
  const suffix = detail.trim() === "" ? "" : `: ${excerpt(detail)}`;
  return new ProviderError("http", `openai: HTTP ${status}${suffix}`, status);
}

function toResponse(completion: z.infer<typeof WireCompletion>): ChatResponse {
  // The schema guarantees a first choice; only one is ever requested.
  const choice = completion.choices[0];
  const message = choice?.message;
  const response: ChatResponse = {
    tool_calls: toToolCalls(message?.tool_calls ?? [], "openai"),
    content: message?.content ?? null,
  };
  if (completion.usage) response.usage = completion.usage;
  if (choice?.finish_reason) response.finish_reasons = [choice.finish_reason];
  if (completion.model) response.model = completion.model;
  return response;
}
