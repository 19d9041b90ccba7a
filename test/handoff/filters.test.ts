import { describe, expect, it } from "vitest";
import {
  applyFilters,
  describeFilters,
  dropHistory,
  isToolItem,
  keepHistory,
  redactPiiItems,
  removeToolItems,
} from "../../src/handoff/filters";
import type { HistoryItem } from "../../src/schemas/handoff";

const msg = (n: number, extra: Partial<HistoryItem> = {}): HistoryItem => ({
  id: `m${n}`,
  role: n % 2 ? "assistant" : "user",
  content: `message ${n}`,
  ...extra,
});
const ids = (items: HistoryItem[]) => items.map((i) => i.id);
const history = (n: number) => Array.from({ length: n }, (_, i) => msg(i + 1));

describe("max_history", () => {
  it.each([
    // [items, N, expected ids]
    [10, 5, ["m1", "m2", "m8", "m9", "m10"]],
    [10, 3, ["m1", "m2", "m10"]],
    [10, 2, ["m1", "m2"]],
    [10, 9, ["m1", "m2", "m4", "m5", "m6", "m7", "m8", "m9", "m10"]],
    [10, 10, history(10).map((m) => m.id)],
    [10, 11, history(10).map((m) => m.id)],
    [3, 3, ["m1", "m2", "m3"]],
    [4, 3, ["m1", "m2", "m4"]],
    [2, 2, ["m1", "m2"]],
    [1, 5, ["m1"]],
    [0, 5, []],
  ])("%i items, max %i", (count, max, expected) => {
    expect(ids(keepHistory(max)(history(count)))).toEqual(expected);
  });

  it("keeps the first N when N is below 2 (outside the schema's range)", () => {
    expect(ids(keepHistory(1)(history(5)))).toEqual(["m1"]);
    expect(keepHistory(0)(history(5))).toEqual([]);
  });

  it("never mutates its input", () => {
    // Every filter has something to do here: items to drop, a tool item, PII to mask.
    const items = [
      ...history(5),
      { id: "t", role: "tool", content: "ok", type: "tool_output" },
      msg(7, { content: "mail a@example.com" }),
    ] satisfies HistoryItem[];
    const copy = structuredClone(items);
    expect(keepHistory(3)(items)).toHaveLength(3);
    expect(redactPiiItems(items)[6]!.content).toBe("mail [REDACTED_EMAIL]");
    expect(removeToolItems(items)).toHaveLength(6);
    expect(applyFilters(items, { remove_tool_items: true, max_history: 3, redact_pii: true })).toHaveLength(3);
    expect(items).toEqual(copy);
  });
});

describe("remove_tool_items", () => {
  it("drops tool calls and tool outputs, by type or by role", () => {
    const items: HistoryItem[] = [
      msg(1),
      { id: "c", role: "assistant", content: "{}", type: "tool_call", tool_name: "lookup" },
      { id: "o", role: "tool", content: "result", type: "tool_output", tool_name: "lookup" },
      { id: "r", role: "tool", content: "legacy output" },
      msg(2, { type: "message" }),
    ];
    expect(ids(removeToolItems(items))).toEqual(["m1", "m2"]);
    expect(items.filter(isToolItem).map((i) => i.id)).toEqual(["c", "o", "r"]);
  });
});

describe("redact_pii on items", () => {
  it("masks content and keeps the same object when nothing changes", () => {
    const clean = msg(1);
    const dirty = msg(2, { content: "mail me at a@example.com" });
    const [a, b] = redactPiiItems([clean, dirty]);
    expect(a).toBe(clean);
    expect(b).toEqual({ ...dirty, content: "mail me at [REDACTED_EMAIL]" });
  });
});

describe("applyFilters", () => {
  const items: HistoryItem[] = [
    msg(1, { content: "my card is 4111 1111 1111 1111" }),
    msg(2),
    { id: "c", role: "assistant", content: "{}", type: "tool_call" },
    { id: "o", role: "tool", content: "ok", type: "tool_output" },
    msg(3),
    msg(4, { content: "call 555-123-4567" }),
  ];

  it("drops the history when include_context is false, whatever else is set", () => {
    expect(applyFilters(items, { max_history: 10, redact_pii: true }, false)).toEqual([]);
    expect(dropHistory(items)).toEqual([]);
    expect(describeFilters({ redact_pii: true }, false)).toEqual(["include_context:false"]);
  });

  it("passes the history whole with no filters", () => {
    expect(applyFilters(items, undefined)).toEqual(items);
    expect(applyFilters(items, {})).toEqual(items);
    expect(describeFilters(undefined)).toEqual([]);
  });

  it("removes tool items before counting max_history, then redacts what is kept", () => {
    const out = applyFilters(items, { remove_tool_items: true, max_history: 3, redact_pii: true });
    expect(ids(out)).toEqual(["m1", "m2", "m4"]);
    expect(out[0]!.content).toBe("my card is [REDACTED_CARD]");
    expect(out[2]!.content).toBe("call [REDACTED_PHONE]");
    expect(describeFilters({ remove_tool_items: true, max_history: 3, redact_pii: true })).toEqual([
      "remove_tool_items",
      "max_history:3",
      "redact_pii",
    ]);
  });

  it("counts tool items in max_history when they are kept", () => {
    expect(ids(applyFilters(items, { max_history: 3 }))).toEqual(["m1", "m2", "m4"]);
    expect(ids(applyFilters(items, { max_history: 4 }))).toEqual(["m1", "m2", "m3", "m4"]);
    expect(ids(applyFilters(items, { max_history: 5 }))).toEqual(["m1", "m2", "o", "m3", "m4"]);
  });

  it("does not treat redact_pii: false or remove_tool_items: false as filters", () => {
    expect(describeFilters({ redact_pii: false, remove_tool_items: false })).toEqual([]);
    expect(applyFilters(items, { redact_pii: false })).toEqual(items);
  });
});

describe("history: nested and none", () => {
  const items = [
    { role: "user" as const, content: "my card is 4111 1111 1111 1111" },
    {
      role: "assistant" as const,
      agent: "desk",
      type: "tool_call" as const,
      content: "",
      tool_calls: [{ id: "c", name: "lookup", arguments: "{}" }],
    },
    { role: "tool" as const, type: "tool_output" as const, tool_call_id: "c", content: "found" },
  ];

  it("nested: one system message, a line per item, after the other filters", () => {
    const nested = applyFilters(items, { history: "nested", redact_pii: true });
    expect(nested).toHaveLength(1);
    expect(nested[0]).toMatchObject({ role: "system", type: "message" });
    expect(nested[0]!.content.split("\n")).toEqual([
      "Conversation before the handoff (3 items):",
      "- user: my card is [REDACTED_CARD]",
      "- desk: (called lookup)",
      "- tool output: found",
    ]);
  });

  it("none: nothing is handed over", () => {
    expect(applyFilters(items, { history: "none" })).toEqual([]);
  });
});
