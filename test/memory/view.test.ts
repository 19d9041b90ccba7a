import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { turnBudget } from "../../src/memory/budget";
import { coveredRange, planView, type ViewEntry } from "../../src/memory/view";
import type { HistoryItem } from "../../src/schemas/handoff";

/** The view planner (docs/memory.md, Compaction): where a view is cut, and when it cannot be. */

const budget = (memory: Record<string, unknown>) =>
  turnBudget(
    {
      memory: {
        compact_at: 0.8,
        strategy: "summarize",
        keep_last: 3,
        max_tool_output_tokens: 64,
        facts: false,
        ...memory,
      },
    },
    "fake",
  );

const user = (content: string): HistoryItem => ({ role: "user", content });
const said = (content: string): HistoryItem => ({ role: "assistant", content });
const calls = (...ids: string[]): HistoryItem => ({
  role: "assistant",
  content: "",
  tool_calls: ids.map((id) => ({ id, name: "t", arguments: "{}" })),
});
const output = (id: string): HistoryItem => ({ role: "tool", content: "out", tool_call_id: id });

const entries = (items: HistoryItem[], tokens = 100): ViewEntry[] =>
  items.map((item, i) => ({ item, seq: i + 1, tokens }));

describe("planView", () => {
  it("sends a view under the threshold as it is", () => {
    const plan = planView({
      fixed: 100,
      summary: 0,
      entries: entries([user("a"), said("b")]),
      budget: budget({ max_input_tokens: 1024 }),
    });
    expect(plan).toEqual({ kind: "fits", tokens: 300 });
  });

  it("past the threshold, covers all but the last keep_last items", () => {
    const items = Array.from({ length: 20 }, (_, i) => (i % 2 ? said(`${i}`) : user(`${i}`)));
    const plan = planView({
      fixed: 100,
      summary: 0,
      entries: entries(items),
      budget: budget({ max_input_tokens: 2000 }),
    });
    // The last user message is item 18: it and what follows stay, and at least keep_last (3).
    expect(plan).toEqual({ kind: "compact", cut: 17, tokens: 2100 });
  });

  it("keeps everything since the last user message, even past keep_last", () => {
    const items = [
      user("q0"),
      said("a0"),
      user("q"),
      calls("c1"),
      output("c1"),
      calls("c2"),
      output("c2"),
      said("done"),
    ];
    const plan = planView({
      fixed: 100,
      summary: 0,
      entries: entries(items),
      budget: budget({ max_input_tokens: 1100, keep_last: 1 }),
    });
    expect(plan).toMatchObject({ kind: "compact", cut: 2 });
  });

  it("never keeps an output without its call: the cut moves back to the call", () => {
    const items = [
      user("q0"),
      said("a0"),
      calls("c1", "c2"),
      output("c1"),
      output("c2"),
      said("x"),
      user("q1"),
      said("y"),
    ];
    // keep_last 4 would cut between the second output and its call.
    const plan = planView({
      fixed: 50,
      summary: 0,
      entries: entries(items),
      budget: budget({ max_input_tokens: 1000, keep_last: 4 }),
    });
    expect(plan).toMatchObject({ kind: "compact", cut: 2 });
  });

  it("keeps less than asked when what it keeps would pass the threshold, and says when even that is too large", () => {
    const items = [user("q"), calls("c1"), output("c1"), calls("c2"), output("c2"), said("x")];
    const tight = planView({
      fixed: 0,
      summary: 0,
      entries: entries(items, 400),
      budget: budget({ max_input_tokens: 1100 }),
    });
    expect(tight).toMatchObject({ kind: "compact" });
    if (tight.kind === "compact") expect(tight.cut).toBeGreaterThan(0);
    const huge = planView({
      fixed: 2000,
      summary: 0,
      entries: entries(items, 400),
      budget: budget({ max_input_tokens: 1100 }),
    });
    expect(huge).toEqual({ kind: "too_large", tokens: 4400 });
  });

  it("strategy none: sends what fits the budget, refuses what does not", () => {
    const items = entries([user("a"), said("b"), user("c")], 400);
    expect(
      planView({ fixed: 0, summary: 0, entries: items, budget: budget({ max_input_tokens: 1300, strategy: "none" }) }),
    ).toEqual({ kind: "fits", tokens: 1200 });
    expect(
      planView({ fixed: 0, summary: 0, entries: items, budget: budget({ max_input_tokens: 1100, strategy: "none" }) }),
    ).toEqual({ kind: "too_large", tokens: 1200 });
  });

  it("for any view, a cut leaves every kept output with its call, and what is kept within the budget", () => {
    const item = fc.oneof(
      fc.constant<"user">("user"),
      fc.constant<"said">("said"),
      fc.integer({ min: 1, max: 3 }).map((n) => n),
    );
    fc.assert(
      fc.property(fc.array(item, { minLength: 1, maxLength: 40 }), fc.integer({ min: 10, max: 200 }), (shape, size) => {
        let next = 0;
        const items: HistoryItem[] = shape.flatMap((s) => {
          if (s === "user") return [user("u")];
          if (s === "said") return [said("s")];
          const ids = Array.from({ length: s }, () => `c${next++}`);
          return [calls(...ids), ...ids.map(output)];
        });
        const view = entries(items, size);
        const b = budget({ max_input_tokens: 1024, keep_last: 4 });
        const plan = planView({ fixed: 50, summary: 0, entries: view, budget: b });
        if (plan.kind !== "compact") return;
        const kept = view.slice(plan.cut);
        const keptCalls = new Set(kept.flatMap((e) => e.item.tool_calls?.map((c) => c.id) ?? []));
        for (const e of kept) if (e.item.role === "tool") expect(keptCalls.has(e.item.tool_call_id!)).toBe(true);
        expect(kept.reduce((s, e) => s + e.tokens, 50 + b.summary_tokens)).toBeLessThanOrEqual(b.max_input_tokens);
      }),
    );
  });
});

describe("coveredRange", () => {
  it("extends the previous compaction by what is cut off, context items first", () => {
    const covered: ViewEntry[] = [
      { item: user("ctx"), seq: null, tokens: 1 },
      { item: user("a"), seq: 7, tokens: 1 },
      { item: said("b"), seq: 8, tokens: 1 },
    ];
    expect(coveredRange(null, covered)).toEqual({ context_items: 1, from_seq: 7, through_seq: 8, items: 3 });
    expect(coveredRange({ context_items: 2, from_seq: 3, through_seq: 6, items: 6 }, covered.slice(1))).toEqual({
      context_items: 2,
      from_seq: 3,
      through_seq: 8,
      items: 8,
    });
  });
});
