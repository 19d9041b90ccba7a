/**
 * The Workers AI provider: tool calling through the `env.AI` binding. The binding has no
 * local simulator, so it is typed here by the one method Relay uses and tests pass a fake.
 */
import * as z from "zod";
import { readSse } from "../lib/sse";
import { abortError, excerpt, raceAbort } from "./failures";
import { type ChatProvider, type ChatRequest, type ChatResponse, type OnText, ProviderError } from "./types";
import { describeIssue, toToolCalls, WireToolCall, WireUsage, wireMessage } from "./wire";

/** The part of the `Ai` binding Relay calls: `env.AI` satisfies it. */
export interface AiBinding {
  run(model: string, inputs: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<unknown>;
}

// Workers AI models answer with flat or nested tool calls (both parsed by WireToolCall).
const RunResult = z
  .object({
    response: z.unknown().optional(),
    tool_calls: z.array(WireToolCall).nullish(),
    usage: WireUsage.nullish(),
    // Some newer models answer with a whole chat.completion instead, which names its model and finish reason.
    model: z.string().nullish(),
    choices: z
      .array(
        z.object({
          message: z.object({ content: z.string().nullish(), tool_calls: z.array(WireToolCall).nullish() }),
          finish_reason: z.string().nullish(),
        }),
      )
      .nullish(),
  })
  .refine((result) => result.response !== undefined || result.tool_calls != null || result.choices != null, {
    // A stream, a raw Response or an empty object would otherwise read as "no tool call".
    message: "expected response, tool_calls or choices",
  });

/**
 * Calls `ai.run(model, { messages, tools })`. `tool_choice` is honoured only as "none"
 * (tools are then not sent): the binding has no portable way to force a tool call.
 */
export class WorkersAIProvider implements ChatProvider {
  readonly name = "workers-ai" as const;
  readonly #ai: AiBinding;

  constructor(ai: AiBinding) {
    this.#ai = ai;
  }

  complete(req: ChatRequest, signal: AbortSignal): Promise<ChatResponse> {
    // The binding may not stop on abort, so the race is what enforces the deadline.
    return raceAbort(this.#complete(req, signal), signal, this.name);
  }

  /**
   * Text streams (`stream: true` answers server-sent events of `{ response }`); a request
   * with tools is answered whole (`streamed: false`): the binding's models stream text, not
   * tool calls, portably. `first_chunk_ms` is the time from the call to the stream's first event.
   */
  stream(req: ChatRequest, signal: AbortSignal, onText: OnText): Promise<ChatResponse> {
    if (req.tools.length > 0 && req.tool_choice !== "none")
      return this.complete(req, signal).then((response) => ({ ...response, streamed: false }));
    return raceAbort(this.#stream(req, signal, onText), signal, this.name);
  }

  async #stream(req: ChatRequest, signal: AbortSignal, onText: OnText): Promise<ChatResponse> {
    const sent = Date.now();
    let result: unknown;
    try {
      result = await this.#ai.run(req.model, { messages: req.messages.map(wireMessage), stream: true }, { signal });
    } catch (error) {
      if (signal.aborted) throw abortError(signal, this.name);
      throw new ProviderError("http", `workers-ai: ${excerpt(error instanceof Error ? error.message : String(error))}`);
    }
    if (!(result instanceof ReadableStream)) {
      const parsed = RunResult.safeParse(result);
      if (!parsed.success)
        throw new ProviderError("malformed", `workers-ai: unexpected result: ${describeIssue(parsed.error)}`);
      return { ...toResponse(parsed.data), streamed: false };
    }
    let text = "";
    let usage: ChatResponse["usage"];
    let done = false;
    let first: number | undefined;
    try {
      for await (const event of readSse(result as ReadableStream<Uint8Array>)) {
        first ??= Date.now() - sent;
        if (event.data.trim() === "[DONE]") {
          done = true;
          break;
        }
        const piece = StreamPiece.safeParse(parseJson(event.data));
        if (!piece.success)
          throw new ProviderError(
            "malformed",
            `workers-ai: a stream event is not { response }: ${excerpt(event.data, 120)}`,
          );
        if (piece.data.usage) usage = piece.data.usage;
        const delta = piece.data.response ?? "";
        if (delta !== "") {
          text += delta;
          onText(delta);
        }
      }
    } catch (error) {
      if (error instanceof ProviderError) throw error;
      if (signal.aborted) throw abortError(signal, this.name);
      throw new ProviderError("network", `workers-ai: the stream broke: ${excerpt(String(error))}`);
    }
    if (!done)
      throw new ProviderError("malformed", "workers-ai: the stream ended before the model finished its answer");
    return {
      tool_calls: [],
      content: text === "" ? null : text,
      ...(usage ? { usage } : {}),
      streamed: true,
      ...(first === undefined ? {} : { first_chunk_ms: first }),
    };
  }

  async #complete(req: ChatRequest, signal: AbortSignal): Promise<ChatResponse> {
    const inputs: Record<string, unknown> = { messages: req.messages.map(wireMessage) };
    if (req.tools.length > 0 && req.tool_choice !== "none") inputs.tools = req.tools;

    let result: unknown;
    try {
      result = await this.#ai.run(req.model, inputs, { signal });
    } catch (error) {
      if (signal.aborted) throw abortError(signal, this.name);
      const message = error instanceof Error ? error.message : String(error);
      // The binding reports upstream refusals (unknown model, capacity) as thrown errors without a status.
      throw new ProviderError("http", `workers-ai: ${excerpt(message)}`);
    }

    const parsed = RunResult.safeParse(result);
    if (!parsed.success)
      throw new ProviderError("malformed", `workers-ai: unexpected result: ${describeIssue(parsed.error)}`);
    return toResponse(parsed.data);
  }
}

const StreamPiece = z.object({ response: z.string().nullish(), usage: WireUsage.nullish() });

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Text content, or null when the model said nothing (models answer "" beside tool calls). */
function contentOf(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  // JSON-mode models return the parsed object; callers get it back as text.
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.trim() === "" ? null : text;
}

function toResponse(result: z.infer<typeof RunResult>): ChatResponse {
  const first = result.choices?.[0];
  const choice = first?.message;
  const response: ChatResponse = choice
    ? { tool_calls: toToolCalls(choice.tool_calls ?? [], "workers-ai"), content: contentOf(choice.content) }
    : { tool_calls: toToolCalls(result.tool_calls ?? [], "workers-ai"), content: contentOf(result.response) };
  if (result.usage) response.usage = result.usage;
  // Only the chat.completion shape says why the model stopped and which model it was.
  if (first?.finish_reason) response.finish_reasons = [first.finish_reason];
  if (result.model) response.model = result.model;
  return response;
}
