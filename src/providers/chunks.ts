/**
 * A streamed Chat Completion put back together, pure: `chat.completion.chunk`s in, the text
 * deltas out as they come, and at the end the whole answer — tool calls assembled from the
 * pieces their arguments arrive in, usage from the final chunk, the finish reason and the
 * model the chunks name. What makes a stream unusable (a chunk that is not one, a stream cut
 * before the model finished, a tool call without a name or with arguments that never close)
 * is a `malformed` ProviderError; the text handed out before it is the caller's to keep.
 */
import * as z from "zod";
import { excerpt } from "./failures";
import { type ChatResponse, ProviderError, type ToolCall } from "./types";
import { fallbackCallId, WireUsage } from "./wire";

const ToolCallDelta = z.object({
  index: z.number().int().min(0),
  id: z.string().nullish(),
  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
});

const WireChunk = z.object({
  model: z.string().nullish(),
  choices: z
    .array(
      z.object({
        delta: z.object({ content: z.string().nullish(), tool_calls: z.array(ToolCallDelta).nullish() }).nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .default([]),
  usage: WireUsage.nullish(),
});

interface PartialCall {
  id: string | null;
  name: string;
  arguments: string;
}

export class CompletionChunks {
  private text = "";
  private readonly calls = new Map<number, PartialCall>();
  private usage: z.infer<typeof WireUsage> | null = null;
  /** The first choice's `finish_reason`: set once the model finished. */
  private finish: string | null = null;
  private model: string | null = null;

  constructor(private readonly provider: string) {}

  /** Takes one chunk's data (the JSON text of an SSE event); answers the text delta it carried ("" if none). */
  add(data: string): string {
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      throw this.error(`a stream chunk is not JSON: ${excerpt(data, 120)}`);
    }
    const parsed = WireChunk.safeParse(json);
    if (!parsed.success) throw this.error("a stream chunk is not a chat.completion.chunk");
    const chunk = parsed.data;
    if (chunk.usage) this.usage = chunk.usage;
    // Every chunk names the model; the first one that does is kept.
    if (this.model === null && chunk.model) this.model = chunk.model;
    let delta = "";
    for (const choice of chunk.choices.slice(0, 1)) {
      if (choice.finish_reason) this.finish = choice.finish_reason;
      const content = choice.delta?.content;
      if (content) {
        delta += content;
        this.text += content;
      }
      for (const call of choice.delta?.tool_calls ?? []) {
        const known = this.calls.get(call.index) ?? { id: null, name: "", arguments: "" };
        if (call.id) known.id = call.id;
        if (call.function?.name) known.name += call.function.name;
        if (call.function?.arguments) known.arguments += call.function.arguments;
        this.calls.set(call.index, known);
      }
    }
    return delta;
  }

  /** The whole answer once the stream has ended (`done`: the server said so with `[DONE]`). */
  response(done: boolean): ChatResponse {
    if (!done && this.finish === null) throw this.error("the stream ended before the model finished its answer");
    const tool_calls: ToolCall[] = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]) => {
        if (call.name === "") throw this.error(`tool call ${index} has no name`);
        if (!closes(call.arguments))
          throw this.error(
            `the arguments of tool call '${call.name}' are not complete JSON: ${excerpt(call.arguments, 80)}`,
          );
        return { id: call.id ?? fallbackCallId(this.provider, index), name: call.name, arguments: call.arguments };
      });
    const response: ChatResponse = { content: this.text === "" ? null : this.text, tool_calls };
    if (this.usage) response.usage = this.usage;
    if (this.finish !== null) response.finish_reasons = [this.finish];
    if (this.model !== null) response.model = this.model;
    return response;
  }

  private error(message: string): ProviderError {
    return new ProviderError("malformed", `${this.provider}: ${message}`);
  }
}

/** Arguments are whole when they are empty (no arguments) or parse as JSON. */
function closes(args: string): boolean {
  if (args.trim() === "") return true;
  try {
    JSON.parse(args);
    return true;
  } catch {
    return false;
  }
}
