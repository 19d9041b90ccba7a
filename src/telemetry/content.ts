import { redactPii } from "../handoff/pii";
import type { HistoryItem } from "../schemas/handoff";
import { GEN_AI } from "./semconv";
import type { Attributes, UnixNanos } from "./span";
import { isoToNanos } from "./span";

/**
 * Content in spans, for a tenant that turned capture on (docs/observability.md, Content):
 * every text PII-masked by the `redact_pii` filter (src/handoff/pii.ts), messages in the
 * conventions' JSON form (`gen_ai.input.messages`, `gen_ai.output.messages`: a role and text
 * parts), each text cut to MAX_CONTENT_CHARS so a span stays a collector's size.
 */

/** Characters of one captured text; a longer one is cut and marked. */
export const MAX_CONTENT_CHARS = 8 * 1024;

/** A captured text: PII-masked, and cut to MAX_CONTENT_CHARS. */
export function capturedText(text: string): string {
  const masked = redactPii(text.length > MAX_CONTENT_CHARS * 2 ? text.slice(0, MAX_CONTENT_CHARS * 2) : text);
  return masked.length > MAX_CONTENT_CHARS ? `${masked.slice(0, MAX_CONTENT_CHARS)}…[cut]` : masked;
}

const at = (item: HistoryItem): bigint | null => (item.created_at ? BigInt(isoToNanos(item.created_at)) : null);

const textMessage = (item: HistoryItem) =>
  (item.type ?? "message") === "message" && !item.tool_calls && item.content.length > 0;

const asMessage = (item: HistoryItem, finish?: string) => ({
  role: item.role,
  parts: [{ type: "text", content: capturedText(item.content) }],
  ...(finish ? { finish_reason: finish } : {}),
});

/**
 * An agent's turn's messages as its `invoke_agent` span's content: the run's user messages
 * up to the turn's end as its input, the agent's text answers within the turn as its output.
 * `items` are the run's conversation items, in order.
 */
export function turnMessages(
  items: readonly HistoryItem[],
  turn: { agent: string; start_ns: UnixNanos; end_ns: UnixNanos },
): Attributes {
  const start = BigInt(turn.start_ns);
  const end = BigInt(turn.end_ns);
  const input = items.filter((i) => i.role === "user" && textMessage(i) && (at(i) ?? start) <= end);
  const output = items.filter((i) => {
    const t = at(i);
    return i.role === "assistant" && i.agent === turn.agent && textMessage(i) && t !== null && t >= start && t <= end;
  });
  const attributes: Attributes = {};
  if (input.length > 0) attributes[GEN_AI.inputMessages] = JSON.stringify(input.map((i) => asMessage(i)));
  if (output.length > 0)
    attributes[GEN_AI.outputMessages] = JSON.stringify(output.map((i) => asMessage(i, i.cut ? "length" : "stop")));
  return attributes;
}
