import type { HistoryItem } from "../schemas/handoff";
import type { Compaction } from "../schemas/memory";
import type { TurnBudget } from "./budget";

/**
 * What one agent's turn sends the model of its conversation, within its budget (docs/memory.md,
 * Compaction): the pure half. The view is the agent's items in order — the context it was
 * handed, then the session's messages since — after its latest compaction, whose summary
 * stands in for what it covers. When the view would pass the threshold, the older part is
 * covered by a new compaction: the last `keep_last` items stay verbatim, and so does everything
 * since the last user message (the calls the agent is working through, with their outputs); a
 * call is never kept without its outputs, nor an output without its call.
 */

/** One item of a view: a context item (`seq` null) or a session message, with its tokens as the model sees it. */
export interface ViewEntry {
  item: HistoryItem;
  seq: number | null;
  tokens: number;
}

export type ViewPlan =
  /** Send it as it is. */
  | { kind: "fits"; tokens: number }
  /** Cover `entries[0, cut)` with a new compaction (with the previous one's summary), keep the rest. */
  | { kind: "compact"; cut: number; tokens: number }
  /** Even compacted as far as it goes, or with strategy `none`, it passes the budget. */
  | { kind: "too_large"; tokens: number };

export interface ViewInput {
  /** The system prompt's and the tools' tokens, and the reply's priming. */
  fixed: number;
  /** The current summary's tokens (0: none). */
  summary: number;
  entries: readonly ViewEntry[];
  budget: TurnBudget;
}

/** The input's tokens as it stands. */
export function viewTokens(input: Pick<ViewInput, "fixed" | "summary" | "entries">): number {
  return input.entries.reduce((sum, e) => sum + e.tokens, input.fixed + input.summary);
}

/**
 * For each cut `c` in 0..n: whether cutting before entry c leaves every kept output with its
 * call (an output whose call is not in the view at all does not count: it is never sent).
 */
function validCuts(entries: readonly ViewEntry[]): boolean[] {
  const callAt = new Map<string, number>();
  entries.forEach((e, i) => {
    for (const call of e.item.tool_calls ?? []) callAt.set(call.id, i);
  });
  const valid = new Array<boolean>(entries.length + 1).fill(true);
  let lowestCall = Number.POSITIVE_INFINITY;
  for (let c = entries.length; c >= 0; c--) {
    valid[c] = lowestCall >= c;
    const entry = entries[c - 1];
    const id = entry?.item.role === "tool" ? entry.item.tool_call_id : undefined;
    const at = id === undefined ? undefined : callAt.get(id);
    if (at !== undefined) lowestCall = Math.min(lowestCall, at);
  }
  return valid;
}

/** Whether the view fits, or where to cut it. */
export function planView(input: ViewInput): ViewPlan {
  const { entries, budget } = input;
  const tokens = viewTokens(input);
  if (tokens <= budget.threshold) return { kind: "fits", tokens };
  if (budget.strategy === "none") return tokens <= budget.max_input_tokens ? { kind: "fits", tokens } : too(tokens);
  const n = entries.length;
  const valid = validCuts(entries);
  const tail = suffixSums(entries);
  const lastUser = entries.findLastIndex((e) => e.item.role === "user");
  let cut = Math.max(0, n - budget.keep_last);
  if (lastUser >= 0) cut = Math.min(cut, lastUser);
  while (cut > 0 && !valid[cut]) cut--;
  // What is kept must leave room under the threshold for the summary: keep less while it does not.
  const kept = (c: number) => input.fixed + budget.summary_tokens + tail[c]!;
  while (kept(cut) > budget.threshold && cut < n - 1) {
    cut++;
    while (cut < n - 1 && !valid[cut]) cut++;
  }
  if (!valid[cut]) cut = n;
  if (cut === 0 || kept(cut) > budget.max_input_tokens)
    return tokens <= budget.max_input_tokens ? { kind: "fits", tokens } : too(tokens);
  return { kind: "compact", cut, tokens };
}

function too(tokens: number): ViewPlan {
  return { kind: "too_large", tokens };
}

/** sums[c]: the tokens of entries c..n-1. */
function suffixSums(entries: readonly ViewEntry[]): number[] {
  const sums = new Array<number>(entries.length + 1).fill(0);
  for (let i = entries.length - 1; i >= 0; i--) sums[i] = sums[i + 1]! + entries[i]!.tokens;
  return sums;
}

/**
 * The range a new compaction covers: the previous one's, extended by `covered` (the entries
 * cut off, context items first).
 */
export function coveredRange(
  previous: Pick<Compaction, "context_items" | "from_seq" | "through_seq" | "items"> | null,
  covered: readonly ViewEntry[],
): Pick<Compaction, "context_items" | "from_seq" | "through_seq" | "items"> {
  const seqs = covered.flatMap((e) => (e.seq === null ? [] : [e.seq]));
  const contextItems = covered.length - seqs.length;
  const from = previous && previous.from_seq > 0 ? previous.from_seq : (seqs[0] ?? 0);
  return {
    context_items: (previous?.context_items ?? 0) + contextItems,
    from_seq: from,
    through_seq: seqs.length > 0 ? seqs[seqs.length - 1]! : (previous?.through_seq ?? 0),
    items: (previous?.items ?? 0) + covered.length,
  };
}
