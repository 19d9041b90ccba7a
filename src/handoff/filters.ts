import type { HandoffFilter } from "../schemas/agent";
import type { HistoryItem } from "../schemas/handoff";
import { redactPii } from "./pii";

/**
 * Handoff input filters (docs/handoffs.md, What the target receives), each a pure `(items) => items` function in the
 * openai-agents-js style. None mutates its input.
 */

export type HistoryFilter = (items: readonly HistoryItem[]) => HistoryItem[];

/** A handoff's filter settings: the whitelist entry's `filter` (all optional). */
export type FilterSpec = Partial<HandoffFilter>;

/** include_context=false: the target starts with no history. */
export const dropHistory: HistoryFilter = () => [];

/** A tool call or a tool's output, whether marked by `type` or by the `tool` role. */
export function isToolItem(item: HistoryItem): boolean {
  return item.type === "tool_call" || item.type === "tool_output" || item.role === "tool";
}

/** remove_tool_items: drops tool calls and tool outputs. */
export const removeToolItems: HistoryFilter = (items) => items.filter((item) => !isToolItem(item));

/**
 * max_history N: keeps the first 2 items (the opening request and its first answer carry
 * the task) and the last N−2. N below 2 keeps the first N; fewer than N+1 items pass whole.
 */
export function keepHistory(max: number): HistoryFilter {
  const n = Math.max(0, Math.floor(max));
  return (items) => {
    if (items.length <= n) return [...items];
    if (n < 2) return items.slice(0, n);
    return [...items.slice(0, 2), ...items.slice(items.length - (n - 2))];
  };
}

/** redact_pii: masks card numbers, SSNs, e-mails and phone numbers in each item's content. */
export const redactPiiItems: HistoryFilter = (items) =>
  items.map((item) => {
    const content = redactPii(item.content);
    return content === item.content ? item : { ...item, content };
  });

/** How much of one item's text the nested summary keeps. */
const NESTED_ITEM_CHARS = 600;
/** The nested summary stays well inside one message's 32 KiB. */
const NESTED_TOTAL_CHARS = 24_000;

function speaker(item: HistoryItem): string {
  if (item.role === "tool") return `tool ${item.tool_name ?? "output"}`;
  return item.role === "assistant" ? (item.agent ?? "assistant") : item.role;
}

function summaryLine(item: HistoryItem): string {
  const calls = item.tool_calls?.map((c) => c.name).join(", ");
  const text = item.content.replace(/\s+/g, " ").trim();
  const short = text.length > NESTED_ITEM_CHARS ? `${text.slice(0, NESTED_ITEM_CHARS - 1)}…` : text;
  return `- ${speaker(item)}: ${[short, calls ? `(called ${calls})` : ""].filter(Boolean).join(" ")}`;
}

/**
 * history: nested — the whole history as one system message, a line per item (newest kept
 * when it would not fit), so a target deep in a chain gets the gist in one item.
 */
export const nestHistory: HistoryFilter = (items) => {
  if (items.length === 0) return [];
  const lines: string[] = [];
  let total = 0;
  for (const item of [...items].reverse()) {
    const line = summaryLine(item);
    if (total + line.length > NESTED_TOTAL_CHARS) break;
    lines.unshift(line);
    total += line.length + 1;
  }
  const dropped = items.length - lines.length;
  const head = `Conversation before the handoff (${items.length} item${items.length === 1 ? "" : "s"}${dropped > 0 ? `, the oldest ${dropped} left out` : ""}):`;
  return [{ role: "system", type: "message", content: [head, ...lines].join("\n") }];
};

interface NamedFilter {
  name: string;
  filter: HistoryFilter;
}

/**
 * The filters a spec turns on, in the order they run: tool items go before max_history
 * counts, so N keeps N conversational items; PII is masked last, on what is kept.
 */
export function historyFilters(spec: FilterSpec | undefined, includeContext = true): NamedFilter[] {
  if (!includeContext) return [{ name: "include_context:false", filter: dropHistory }];
  if (spec?.history === "none") return [{ name: "history:none", filter: dropHistory }];
  const filters: NamedFilter[] = [];
  if (spec?.remove_tool_items) filters.push({ name: "remove_tool_items", filter: removeToolItems });
  if (spec?.max_history !== undefined)
    filters.push({ name: `max_history:${spec.max_history}`, filter: keepHistory(spec.max_history) });
  if (spec?.redact_pii) filters.push({ name: "redact_pii", filter: redactPiiItems });
  // Last: what is nested is what the other filters kept, masked. `summary` nests what the
  // session chose for it (the source's compaction and what followed: docs/memory.md).
  if (spec?.history === "nested" || spec?.history === "summary")
    filters.push({ name: `history:${spec.history}`, filter: nestHistory });
  return filters;
}

/** Names of the filters a spec turns on, e.g. ["remove_tool_items", "max_history:10"]. */
export function describeFilters(spec: FilterSpec | undefined, includeContext = true): string[] {
  return historyFilters(spec, includeContext).map((f) => f.name);
}

/** Runs a handoff's filters over a history. */
export function applyFilters(
  items: readonly HistoryItem[],
  spec: FilterSpec | undefined,
  includeContext = true,
): HistoryItem[] {
  return historyFilters(spec, includeContext).reduce<HistoryItem[]>((acc, f) => f.filter(acc), [...items]);
}
