import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { summaryChunks, summaryItem, summaryRequest, transcript, trimNote } from "../../src/memory/summary";
import type { HistoryItem } from "../../src/schemas/handoff";
import { loadTokenizer } from "../../src/services/tokenizer";

/** The words of a compaction (docs/memory.md, Compaction), and the pieces a long one is read in. */

const items: HistoryItem[] = Array.from({ length: 300 }, (_, i) => ({
  role: i % 2 ? "assistant" : "user",
  content: `Item ${i}: ${"the crate left the dock on time ".repeat(6)}`,
}));

describe("summary requests", () => {
  it("a transcript line per item: who, what, and the calls made", () => {
    expect(
      transcript([
        { role: "user", content: "hi\nthere" },
        {
          role: "assistant",
          agent: "desk",
          content: "",
          tool_calls: [{ id: "c", name: "find", arguments: '{"q":1}' }],
        },
        { role: "tool", tool_name: "find", tool_call_id: "c", content: "found" },
      ]),
    ).toBe('user: hi there\ndesk: [called find({"q":1})]\ntool find: found');
  });

  it("rolls an earlier summary in, and asks for a length", () => {
    const [system, user] = summaryRequest("Ada is the user.", items.slice(0, 2), 100);
    expect(system!.content).toMatch(/^You compact a conversation/);
    expect(user!.content).toMatch(/^Summary so far:\nAda is the user\.\n\nWhat followed \(2 items\):\nuser: Item 0/);
    expect(user!.content).toMatch(/at most 70 words\.$/);
  });

  it("reads more than a request's worth in pieces, each within the budget, in order, nothing left out", async () => {
    const { count } = await loadTokenizer(env.ASSETS);
    const chunks = summaryChunks(items, 2000, 300, count);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.flat()).toEqual(items);
    for (const chunk of chunks) {
      const [system, user] = summaryRequest("x ".repeat(290), chunk, 300);
      expect(count(system!.content!) + count(user!.content!) + 11).toBeLessThanOrEqual(2000);
    }
    expect(summaryChunks(items.slice(0, 3), 2000, 300, count)).toEqual([items.slice(0, 3)]);
    expect(summaryChunks([], 2000, 300, count)).toEqual([]);
  });

  it("cuts an item too long for any piece on its own", async () => {
    const { count } = await loadTokenizer(env.ASSETS);
    const huge: HistoryItem = { role: "tool", tool_call_id: "c", content: "段落".repeat(4000) };
    const [[piece]] = summaryChunks([huge], 1024, 150, count) as [[HistoryItem]];
    expect(count(transcript([piece]))).toBeLessThanOrEqual(1024 - 150 - 200);
  });

  it("the item that stands for a compaction, and trim's note", () => {
    expect(summaryItem({ id: "cmp_1", strategy: "summarize", content: "Facts.", items: 12 })).toEqual({
      id: "cmp_1",
      role: "system",
      type: "message",
      content: "Summary of the earlier conversation (12 items, compacted):\nFacts.",
    });
    expect(trimNote(1)).toMatch(/^1 earlier item was left out/);
  });
});
