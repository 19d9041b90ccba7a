import { describe, expect, it } from "vitest";
import { summaryRequest } from "../../src/memory/summary";
import { LocalProvider } from "../../src/providers/local";
import { extractiveDigest } from "../../src/providers/local-digest";

/** The local provider's summary (docs/memory.md, Offline): an extractive digest, deterministic. */

const items = [
  { role: "user" as const, content: "Hi there" },
  { role: "assistant" as const, agent: "desk", content: "Hello! How can I help?" },
  { role: "user" as const, content: "My order 88412 was sent to 12 Elm Street, Springfield." },
  ...Array.from({ length: 30 }, (_, i) => ({ role: "assistant" as const, content: `ok ${"filler ".repeat(8)}${i}` })),
];

describe("the local provider's digest", () => {
  it("keeps the lines that carry facts, within the word limit, in order", () => {
    const messages = summaryRequest("Earlier: the user is Ada Quill, account 5521.", items, 100);
    const digest = extractiveDigest(messages[1]!.content as string);
    expect(digest).toContain("88412");
    expect(digest).toContain("Ada Quill");
    expect(digest.split(/\s+/).length).toBeLessThanOrEqual(70);
    expect(digest.indexOf("Ada Quill")).toBeLessThan(digest.indexOf("88412"));
    expect(extractiveDigest(messages[1]!.content as string)).toBe(digest);
  });

  it("answers a request with tool_choice none by the digest of its last user message", async () => {
    const local = new LocalProvider(0);
    const messages = summaryRequest(null, items, 200);
    const answer = await local.complete(
      { model: "local", messages, tools: [], tool_choice: "none" },
      new AbortController().signal,
    );
    expect(answer.content).toBe(extractiveDigest(messages[1]!.content as string));
    expect(answer.tool_calls).toEqual([]);
  });
});
