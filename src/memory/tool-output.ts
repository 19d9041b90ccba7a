import type { ToolSpec } from "../providers/types";
import type { HistoryItem } from "../schemas/handoff";
import type { CountTokens } from "./tokens";

/**
 * Large tool outputs in what the model sees (docs/memory.md, Tool outputs): cut at the agent's
 * limit with a marker saying how to read on, and `read_tool_output`, which reads the stored
 * output from an offset in pieces of the same size. The stored output stays whole.
 */

export const READ_TOOL_OUTPUT = "read_tool_output";

/** The longest prefix of `text`, in characters, whose tokens are at most `limit`. */
export function fitTokens(text: string, limit: number, count: CountTokens): number {
  const total = count(text);
  if (total <= limit) return text.length;
  // Start from the proportional length and step down: a few counts at most.
  let chars = Math.floor((text.length * limit) / total);
  while (chars > 0 && count(text.slice(0, chars)) > limit) chars = Math.floor(chars * 0.9);
  return chars;
}

/** The marker after a cut output, and after a piece `read_tool_output` returns with more to come. */
export function cutMarker(callId: string, shown: number, total: number): string {
  return `\n…[cut: characters ${shown} of ${total} shown. Call ${READ_TOOL_OUTPUT} with {"call_id": "${callId}", "offset": ${shown}} to read on.]`;
}

/** The marker's tokens are not counted exactly: this covers any id. */
const MARKER_TOKENS = 60;

/**
 * A tool output as the model sees it: whole when it is within `limit` tokens, else its start
 * and a marker. `cut` says whether it was cut.
 */
export function viewOutput(
  item: HistoryItem,
  limit: number,
  count: CountTokens,
): { item: HistoryItem; cut: boolean; shown: number } {
  if (item.role !== "tool" || item.tool_call_id === undefined) return { item, cut: false, shown: item.content.length };
  const shown = fitTokens(item.content, Math.max(1, limit - MARKER_TOKENS), count);
  if (shown >= item.content.length) return { item, cut: false, shown };
  return {
    item: { ...item, content: item.content.slice(0, shown) + cutMarker(item.tool_call_id, shown, item.content.length) },
    cut: true,
    shown,
  };
}

/** What `read_tool_output` takes. */
export const READ_TOOL_OUTPUT_SPEC: ToolSpec = {
  type: "function",
  function: {
    name: READ_TOOL_OUTPUT,
    description:
      "Read more of a tool output that was cut in the conversation, from a character offset (the cut output's marker gives both).",
    parameters: {
      type: "object",
      properties: {
        call_id: { type: "string", description: "The id of the tool call whose output was cut." },
        offset: { type: "integer", minimum: 0, description: "The character to start from." },
      },
      required: ["call_id", "offset"],
      additionalProperties: false,
    },
  },
};

/**
 * The answer to a `read_tool_output` call: the piece of the stored output at `offset`, within
 * `limit` tokens, with a marker when more follows; an error text when there is no such output.
 */
export function readToolOutput(
  args: { call_id: string; offset: number },
  stored: HistoryItem | undefined,
  limit: number,
  count: CountTokens,
): string {
  if (stored?.role !== "tool")
    return `Error: no tool output of call '${args.call_id}' in this conversation. Use the call_id a cut output's marker names.`;
  const total = stored.content.length;
  if (args.offset >= total) return `Error: offset ${args.offset} is past the output's end (${total} characters).`;
  const rest = stored.content.slice(args.offset);
  const length = fitTokens(rest, Math.max(1, limit - MARKER_TOKENS), count);
  const end = args.offset + Math.max(1, length);
  const piece = stored.content.slice(args.offset, end);
  return end >= total ? piece : piece + cutMarker(args.call_id, end, total);
}
