/**
 * The model-provider contract: one tool-calling chat completion, whatever serves it
 * (an OpenAI-compatible endpoint, the Workers AI binding, or the offline local matcher).
 * Callers depend on this file only; the providers are interchangeable behind it.
 */
import type { ProviderName } from "../schemas/routing";
import type { TraceContext } from "../telemetry/trace-context";

export type { ProviderName };

/** A tool call the model asked for; `arguments` is the raw JSON text as the wire gave it. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** One chat message in the OpenAI roles; assistant tool calls and tool results round-trip. */
export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCall[] }
  | { role: "tool"; content: string; tool_call_id: string };

/** A function tool in the OpenAI Chat Completions shape; `parameters` is a JSON Schema. */
export interface ToolSpec {
  type: "function";
  function: {
    name: string;
    description: string;
    parameters: Record<string, unknown>;
  };
}

export type ToolChoice = "required" | "auto" | "none";

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools: ToolSpec[];
  tool_choice: ToolChoice;
  /** The run's trace: a provider that calls over HTTP sends it as `traceparent` (docs/observability.md). */
  trace?: TraceContext;
}

export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** What a provider answers: tool calls in the model's order, text content, token usage if known. */
export interface ChatResponse {
  tool_calls: ToolCall[];
  content: string | null;
  usage?: TokenUsage;
  /**
   * Set by `stream`: true when the text came in pieces as the model wrote it, false when the
   * provider or model answered whole instead (a fallback the run records).
   */
  streamed?: boolean;
  /**
   * Why the model stopped, as the provider said (OpenAI's `finish_reason`: `stop`,
   * `tool_calls`, `length`, `content_filter`), for the one answer Relay asks for.
   */
  finish_reasons?: string[];
  /** The model the provider says answered (it may name a version of the one asked for), when it says. */
  model?: string;
  /** A streamed answer: milliseconds from sending the request to receiving the first chunk. */
  first_chunk_ms?: number;
}

/** Called with each piece of the answer's text as it arrives, in order. */
export type OnText = (delta: string) => void;

/**
 * A model provider. `complete` and `stream` reject only with a `ProviderError`. `stream`,
 * when a provider has it, answers the same as `complete` and hands out the text as it comes.
 */
export interface ChatProvider {
  readonly name: ProviderName;
  complete(req: ChatRequest, signal: AbortSignal): Promise<ChatResponse>;
  stream?(req: ChatRequest, signal: AbortSignal, onText: OnText): Promise<ChatResponse>;
}

/**
 * Why a completion failed:
 * - `timeout`: the signal was aborted (deadline or caller cancellation) before an answer;
 * - `http`: the upstream answered with an error (status set when there is one);
 * - `network`: the upstream could not be reached;
 * - `malformed`: an answer came back that is not a valid completion.
 */
export type ProviderErrorKind = "timeout" | "http" | "network" | "malformed";

/**
 * A provider failure. It stays inside the Worker (the LLM router turns it into an outcome
 * value), so it never has to survive Durable Object RPC.
 */
export class ProviderError extends Error {
  override readonly name = "ProviderError";
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    /** HTTP status, for `http` failures that have one. */
    readonly status?: number,
  ) {
    super(message);
  }
}

export function isProviderError(error: unknown): error is ProviderError {
  return error instanceof ProviderError;
}
