/**
 * Tool calls on the wire, both ways: providers disagree on whether arguments are JSON text
 * or an object and some omit call ids (Relay always hands out JSON text and an id), while
 * outgoing assistant messages carry calls in the OpenAI nested shape every provider accepts.
 */
import * as z from "zod";
import { ulid } from "../lib/ulid";
import type { ChatMessage, ToolCall } from "./types";

/** Arguments as JSON text: strings pass through untouched (even invalid JSON), objects are serialised. */
export function argumentsText(value: unknown): string {
  if (typeof value === "string") return value;
  return JSON.stringify(value ?? {});
}

/**
 * An id for a call the upstream did not name: its position in the answer, made unique, since
 * a session keeps every turn's calls and an MCP server or tool endpoint drops repeats by it.
 */
export function fallbackCallId(provider: string, index: number): string {
  return `call_${provider.replace(/[^a-z0-9]/gi, "_")}_${index}_${ulid().toLowerCase()}`;
}

/** A message in the Chat Completions wire shape (assistant tool calls nested under `function`). */
export function wireMessage(message: ChatMessage): Record<string, unknown> {
  if (message.role !== "assistant" || !message.tool_calls || message.tool_calls.length === 0) return { ...message };
  return {
    role: "assistant",
    content: message.content,
    tool_calls: message.tool_calls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: call.arguments },
    })),
  };
}

// Two tool-call shapes exist in the wild: the OpenAI nested `{ id, type, function: { name,
// arguments } }` and the flat `{ name, arguments }` of Workers AI's older models.
const NestedToolCall = z.object({
  id: z.string().min(1).optional(),
  type: z.string().optional(),
  function: z.object({ name: z.string().min(1), arguments: z.unknown() }),
});
const FlatToolCall = z.object({ id: z.string().min(1).optional(), name: z.string().min(1), arguments: z.unknown() });

/** A tool call as any supported upstream sends it. */
export const WireToolCall = z.union([NestedToolCall, FlatToolCall]);
export type WireToolCall = z.infer<typeof WireToolCall>;

export const WireUsage = z.object({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
});

/** Wire calls → Relay calls, in order; non-function tool kinds are dropped (a router only understands functions). */
export function toToolCalls(calls: readonly WireToolCall[], provider: string): ToolCall[] {
  const out: ToolCall[] = [];
  calls.forEach((call, index) => {
    const id = call.id ?? fallbackCallId(provider, index);
    if ("function" in call) {
      if (call.type !== undefined && call.type !== "function") return;
      out.push({ id, name: call.function.name, arguments: argumentsText(call.function.arguments) });
    } else {
      out.push({ id, name: call.name, arguments: argumentsText(call.arguments) });
    }
  });
  return out;
}

/** The first zod issue as one line: where and what. */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.join(".")}` : "";
  return `${issue?.message ?? "invalid"}${where}`;
}
