import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { fitTokens, readToolOutput, viewOutput } from "../../src/memory/tool-output";
import { loadTokenizer } from "../../src/services/tokenizer";

/** Large tool outputs (docs/memory.md, Tool outputs): cut in the view, read on in pieces. */

const text = Array.from({ length: 300 }, (_, i) => `row ${i}: value ${i * 7}`).join("\n");
const stored = { role: "tool" as const, content: text, tool_call_id: "call_1", tool_name: "ledger" };

describe("tool outputs", () => {
  it("fitTokens finds a prefix within the limit", async () => {
    const { count } = await loadTokenizer(env.ASSETS);
    const chars = fitTokens(text, 100, count);
    expect(count(text.slice(0, chars))).toBeLessThanOrEqual(100);
    expect(chars).toBeGreaterThan(0);
    expect(fitTokens("short", 100, count)).toBe(5);
  });

  it("an output within the limit is shown whole; a larger one is cut with a marker that says how to read on", async () => {
    const { count } = await loadTokenizer(env.ASSETS);
    expect(viewOutput({ ...stored, content: "small" }, 200, count)).toMatchObject({ cut: false });
    const shown = viewOutput(stored, 200, count);
    expect(shown.cut).toBe(true);
    expect(count(shown.item.content)).toBeLessThanOrEqual(200);
    expect(shown.item.content).toContain(`Call read_tool_output with {"call_id": "call_1", "offset": ${shown.shown}}`);
    expect(text.startsWith(shown.item.content.slice(0, shown.shown))).toBe(true);
  });

  it("read_tool_output reads the whole output back in pieces within the limit", async () => {
    const { count } = await loadTokenizer(env.ASSETS);
    let offset = 0;
    let read = "";
    for (let i = 0; i < 100 && offset < text.length; i++) {
      const piece = readToolOutput({ call_id: "call_1", offset }, stored, 200, count);
      expect(count(piece)).toBeLessThanOrEqual(200);
      const next = /"offset": (\d+)\}/.exec(piece);
      read += next ? piece.slice(0, piece.indexOf("\n…[cut:")) : piece;
      offset = next ? Number(next[1]) : text.length;
    }
    expect(read).toBe(text);
  });

  it("read_tool_output names what is wrong: no such output, an offset past the end", async () => {
    const { count } = await loadTokenizer(env.ASSETS);
    expect(readToolOutput({ call_id: "nope", offset: 0 }, undefined, 200, count)).toMatch(
      /^Error: no tool output of call 'nope'/,
    );
    expect(readToolOutput({ call_id: "call_1", offset: 10 ** 6 }, stored, 200, count)).toMatch(
      /^Error: offset 1000000 is past/,
    );
  });
});
