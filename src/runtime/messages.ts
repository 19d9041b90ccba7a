import { handoffPreamble } from "../handoff/context";
import type { ChatMessage } from "../providers/types";
import type { AgentDefinition } from "../schemas/agent";
import type { HandoffContext, HistoryItem } from "../schemas/handoff";
import { outputSchemaInstruction } from "./guardrail";

/**
 * What an agent sees on its turn: its instructions and the handoff preamble, then the
 * conversation as it was handed to it (the handoff's filters applied) followed by what
 * happened since — as OpenAI Chat Completions messages, with every tool call answered and
 * every tool output tied to a call (endpoints reject orphaned `tool_call_id`s with 400).
 */

/** A stored history item with its sequence number in the session. */
export interface SequencedItem {
  seq: number;
  item: HistoryItem;
}

/**
 * The items an agent's turn is built from: the context's filtered history and the items
 * after the switch when it holds the session through that handoff, else the whole history.
 */
export function agentView(
  agent: string,
  history: readonly SequencedItem[],
  context: HandoffContext | null,
): HistoryItem[] {
  const since = context?.metadata.history_length;
  if (!context || context.to_agent !== agent || since === undefined) return history.map((h) => h.item);
  return [...context.conversation_history, ...history.filter((h) => h.seq > since).map((h) => h.item)];
}

/** The system message: who the agent is, its instructions, and the handoff it received. */
export function systemPrompt(agent: AgentDefinition, context: HandoffContext | null): string {
  const parts = [`You are '${agent.name}'${agent.title ? ` (${agent.title})` : ""}.`];
  if (agent.instructions.trim()) parts.push(agent.instructions.trim());
  if (context && context.to_agent === agent.name) parts.push(handoffPreamble(context));
  const schema = outputSchemaInstruction(agent);
  if (schema) parts.push(schema);
  return parts.join("\n\n");
}

/**
 * History items as chat messages. Each assistant tool call keeps only the calls whose
 * output is in the history, with those outputs placed right after it; an output without
 * its call is dropped. So a filter that cut a pair in half, or an ignored call kept out of
 * a target's view, never leaves the protocol broken.
 */
export function toChatMessages(items: readonly HistoryItem[]): ChatMessage[] {
  const outputs = new Map<string, HistoryItem>();
  for (const item of items)
    if (item.role === "tool" && item.tool_call_id !== undefined && !outputs.has(item.tool_call_id))
      outputs.set(item.tool_call_id, item);
  const messages: ChatMessage[] = [];
  for (const item of items) {
    switch (item.role) {
      case "user":
        messages.push({ role: "user", content: item.content });
        break;
      case "system":
        messages.push({ role: "system", content: item.content });
        break;
      case "assistant": {
        const calls = (item.tool_calls ?? []).filter((call) => outputs.has(call.id));
        if (calls.length === 0) {
          if (item.content) messages.push({ role: "assistant", content: item.content });
          break;
        }
        messages.push({
          role: "assistant",
          content: item.content || null,
          tool_calls: calls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })),
        });
        for (const call of calls) {
          messages.push({ role: "tool", tool_call_id: call.id, content: outputs.get(call.id)!.content });
          outputs.delete(call.id);
        }
        break;
      }
      case "tool":
        // Placed after its call above; one whose call is not in view is dropped.
        break;
    }
  }
  return messages;
}

/** Items without the given tool calls and their outputs (calls a turn ignored, kept from a target's view). */
export function withoutCalls(items: readonly HistoryItem[], callIds: ReadonlySet<string>): HistoryItem[] {
  if (callIds.size === 0) return [...items];
  return items.flatMap((item) => {
    if (item.role === "tool" && item.tool_call_id !== undefined && callIds.has(item.tool_call_id)) return [];
    if (!item.tool_calls?.some((c) => callIds.has(c.id))) return [item];
    const kept = item.tool_calls.filter((c) => !callIds.has(c.id));
    const { tool_calls: _all, ...rest } = item;
    return [kept.length > 0 ? { ...rest, tool_calls: kept } : { ...rest, type: "message" as const }];
  });
}
