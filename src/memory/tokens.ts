import type { ToolSpec } from "../providers/types";
import type { HistoryItem } from "../schemas/handoff";

/**
 * Token counts (docs/memory.md, Token accounting). A message's count is the provider's, when
 * it reported one, else the count of gpt-tokenizer's cl100k_base encoding: exact for the GPT-4
 * family, and close for Llama 3 (whose vocabulary is cl100k_base's and 28K more tokens) and
 * GPT-4o (docs/benchmarks.md, Token counts, says by how much on a sample). The tokenizer
 * (src/services/tokenizer.ts) is loaded only when a conversation nears a budget: before that,
 * a cheap upper bound says it fits.
 */

/** A history item on its way to the store, with its tokens when the provider reported them. */
export type CountedItem = HistoryItem & { tokens?: number };

/** Counts the tokens of a text. */
export type CountTokens = (text: string) => number;

/** What a message costs besides its text: the role and its delimiters (OpenAI's chat format). */
export const MESSAGE_OVERHEAD = 4;
/** What one tool call costs besides its name and arguments. */
const CALL_OVERHEAD = 3;
/** What the reply's priming costs (`<|start|>assistant<|message|>`). */
export const REPLY_OVERHEAD = 3;

/** The UTF-8 length of a text: an upper bound of its token count (a byte-level BPE token is at least one byte). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code < 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** The texts a history item sends the model. */
function itemTexts(item: HistoryItem): string[] {
  const texts = [item.content];
  for (const call of item.tool_calls ?? []) texts.push(call.name, call.arguments);
  return texts;
}

function callsOverhead(item: HistoryItem): number {
  return (item.tool_calls?.length ?? 0) * CALL_OVERHEAD;
}

/** A history item's tokens as the model sees it, counted by `count`. */
export function itemTokens(item: HistoryItem, count: CountTokens): number {
  return MESSAGE_OVERHEAD + callsOverhead(item) + itemTexts(item).reduce((sum, text) => sum + count(text), 0);
}

/** An upper bound of a history item's tokens, with no tokenizer. */
export function itemTokensAtMost(item: HistoryItem): number {
  return itemTokens(item, utf8Length);
}

/** The tokens of the tools offered: their JSON, as providers render them into the prompt. */
export function toolsTokens(tools: readonly ToolSpec[], count: CountTokens): number {
  return tools.length === 0 ? 0 : count(JSON.stringify(tools));
}
