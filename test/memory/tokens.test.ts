import { env } from "cloudflare:workers";
import fc from "fast-check";
import { countTokens } from "gpt-tokenizer/encoding/cl100k_base";
import { describe, expect, it } from "vitest";
import { turnBudget } from "../../src/memory/budget";
import { contextWindow, LOCAL_WINDOW, UNKNOWN_WINDOW, WORKERS_AI_WINDOW } from "../../src/memory/context-windows";
import { itemTokens, itemTokensAtMost, utf8Length } from "../../src/memory/tokens";
import { loadTokenizer } from "../../src/services/tokenizer";

/** Token accounting (docs/memory.md): the tokenizer, the upper bound that spares it, the budgets. */

describe("token counts", () => {
  it("the tokenizer loads once and counts as cl100k_base does", async () => {
    const { count, exact } = await loadTokenizer(env.ASSETS);
    expect(exact).toBe(true);
    expect((await loadTokenizer(env.ASSETS)).count).toBe(count);
    expect(count("The locker code is 7319.")).toBe(countTokens("The locker code is 7319."));
    expect(count("")).toBe(0);
  });

  it("the UTF-8 length is the text's byte length", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), (text) => {
        expect(utf8Length(text)).toBe(new TextEncoder().encode(text).byteLength);
      }),
    );
  });

  it("the upper bound is never below the count, whatever the text", async () => {
    const { count } = await loadTokenizer(env.ASSETS);
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 400 }), fc.string({ maxLength: 80 }), (content, args) => {
        const item = {
          role: "assistant" as const,
          content,
          tool_calls: [{ id: "c", name: "lookup", arguments: args }],
        };
        expect(itemTokensAtMost(item)).toBeGreaterThanOrEqual(itemTokens(item, count));
      }),
    );
  });
});

describe("budgets", () => {
  it("defaults from the model's window, and the agent's own budget wins", () => {
    expect(contextWindow("gpt-4o-mini")).toBe(128_000);
    expect(contextWindow("gpt-4.1-nano")).toBe(1_047_576);
    expect(contextWindow("local")).toBe(LOCAL_WINDOW);
    expect(contextWindow("@cf/some/new-model")).toBe(WORKERS_AI_WINDOW);
    expect(contextWindow("my-own-model")).toBe(UNKNOWN_WINDOW);
    expect(turnBudget({}, "gpt-4o")).toMatchObject({
      max_input_tokens: 128_000,
      threshold: 102_400,
      strategy: "summarize",
    });
    const own = turnBudget(
      {
        memory: {
          max_input_tokens: 4000,
          compact_at: 0.5,
          strategy: "trim",
          keep_last: 2,
          max_tool_output_tokens: 3000,
          facts: false,
        },
      },
      "gpt-4o",
    );
    // A tool output never takes more than a quarter of the budget.
    expect(own).toMatchObject({
      max_input_tokens: 4000,
      threshold: 2000,
      strategy: "trim",
      max_tool_output_tokens: 1000,
      summary_tokens: 600,
    });
  });
});
