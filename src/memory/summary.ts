import type { ChatMessage } from "../providers/types";
import type { HistoryItem } from "../schemas/handoff";
import type { Compaction } from "../schemas/memory";
import type { CountTokens } from "./tokens";

/**
 * The words of a compaction (docs/memory.md, Compaction): the request that asks a model for a
 * summary, the transcript it reads, and the item that stands in a view for what a compaction
 * covers.
 */

/** How much of one item's text the transcript keeps: a summary needs the gist of a tool's output, not all of it. */
const TRANSCRIPT_ITEM_CHARS = 2000;

export const SUMMARY_INSTRUCTIONS = [
  "You compact a conversation between a user and one or more AI agents so it can go on within the model's context.",
  "Write a summary that replaces the transcript below for whoever continues it.",
  "Keep every fact that may matter later, word for word where it is a value: names, ids, numbers, amounts, dates, addresses, decisions made, promises, open questions and what the user asked for.",
  "Keep what tools returned only as far as it was used. Leave out greetings and filler.",
  "Write plain sentences or short bullet lines, no preamble.",
].join(" ");

function speaker(item: HistoryItem): string {
  if (item.role === "tool") return `tool ${item.tool_name ?? "output"}`;
  return item.role === "assistant" ? (item.agent ?? "assistant") : item.role;
}

function clip(text: string, chars: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > chars ? `${flat.slice(0, chars - 1)}…` : flat;
}

/** The items as lines of text, one per item: who said it, and what (a call's tool and arguments). */
export function transcript(items: readonly HistoryItem[]): string {
  return items
    .map((item) => {
      const calls = (item.tool_calls ?? []).map((c) => `${c.name}(${clip(c.arguments, 300)})`).join(", ");
      const text = clip(item.content, TRANSCRIPT_ITEM_CHARS);
      return `${speaker(item)}: ${[text, calls ? `[called ${calls}]` : ""].filter(Boolean).join(" ")}`;
    })
    .join("\n");
}

/** What a summary request costs besides its transcript: the instructions, the framing, the closing line. */
const REQUEST_OVERHEAD_TOKENS = 200;

/**
 * The covered items in the pieces a summary model reads one request at a time, each piece's
 * request within `maxInputTokens` beside a previous summary of up to `summaryTokens`: a
 * compaction of more than a budget's worth (a long history stored without runs, a large handoff
 * context) rolls its summary through them in order. Never empty when `items` is not.
 */
export function summaryChunks(
  items: readonly HistoryItem[],
  maxInputTokens: number,
  summaryTokens: number,
  count: CountTokens,
): HistoryItem[][] {
  const room = Math.max(1, maxInputTokens - summaryTokens - REQUEST_OVERHEAD_TOKENS);
  const chunks: HistoryItem[][] = [];
  let chunk: HistoryItem[] = [];
  let used = 0;
  for (const item of items) {
    // A line is counted as the transcript writes it; one longer than the room is cut to fit it.
    let line = transcript([item]);
    let tokens = count(line) + 1;
    let piece = item;
    if (tokens > room) {
      line = line.slice(0, Math.floor((line.length * room) / tokens / 1.2));
      piece = { ...item, content: line, tool_calls: undefined };
      tokens = count(transcript([piece])) + 1;
    }
    if (used + tokens > room && chunk.length > 0) {
      chunks.push(chunk);
      chunk = [];
      used = 0;
    }
    chunk.push(piece);
    used += tokens;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/**
 * The messages that ask for a summary of `items`, which follow the summary `previous` (a
 * compaction rolls the one before it in); at most about `maxTokens` of it.
 */
export function summaryRequest(
  previous: string | null,
  items: readonly HistoryItem[],
  maxTokens: number,
): ChatMessage[] {
  const words = Math.max(50, Math.floor(maxTokens * 0.7));
  const parts = [];
  if (previous) parts.push(`Summary so far:\n${previous}`);
  parts.push(`${previous ? "What followed" : "Transcript"} (${items.length} items):\n${transcript(items)}`);
  parts.push(`Write the summary of all of it in at most ${words} words.`);
  return [
    { role: "system", content: SUMMARY_INSTRUCTIONS },
    { role: "user", content: parts.join("\n\n") },
  ];
}

/** `trim`'s stand-in: no summary, a note of what was left out. */
export function trimNote(items: number): string {
  return `${items} earlier item${items === 1 ? " was" : "s were"} left out to stay within the context budget; ask the user again for anything you need from them.`;
}

/** The system item that stands in a view for what a compaction covers. */
export function summaryItem(compaction: Pick<Compaction, "id" | "strategy" | "content" | "items">): HistoryItem {
  const head =
    compaction.strategy === "trim"
      ? "Earlier conversation, left out:"
      : `Summary of the earlier conversation (${compaction.items} item${compaction.items === 1 ? "" : "s"}, compacted):`;
  return { id: compaction.id, role: "system", type: "message", content: `${head}\n${compaction.content}` };
}
