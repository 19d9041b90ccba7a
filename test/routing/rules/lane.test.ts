import { describe, expect, it } from "vitest";
import { compileRuleRouter } from "../../../src/routing/rule-router";
import { compileRules } from "../../../src/routing/rules";
import { nextTurn, SLICE_STEPS } from "../../../src/routing/rules/lane";
import { PATTERN_PREFIX } from "../../../src/routing/rules/pattern-budget";
import { AgentDefinition } from "../../../src/schemas/agent";

// Patterns that keep every state of their program alive on a run of a's: the worst case per instruction.
const heavy = AgentDefinition.parse({
  name: "heavy",
  triggers: { patterns: Array.from({ length: 20 }, (_, i) => `(.*a){${200 + i}}[^a]`), priority: 100 },
});
const light = AgentDefinition.parse({
  name: "light",
  triggers: { keywords: ["refund"], examples: ["a refund please"] },
});
const worst = "a".repeat(PATTERN_PREFIX);

describe("heavy pattern work runs in turns", () => {
  it("waits for its turn between slices, and answers as the route that never waits", async () => {
    const rules = compileRules([heavy]);
    expect(rules.stats.patternInstructions * PATTERN_PREFIX).toBeGreaterThan(4 * SLICE_STEPS);
    let turns = 0;
    const counted = () => {
      turns++;
      return Promise.resolve();
    };
    const input = `${"a".repeat(PATTERN_PREFIX - 1)}b`;
    expect(await rules.matchInTurns(input, Number.POSITIVE_INFINITY, counted)).toEqual(rules.match(input));
    expect(turns).toBeGreaterThanOrEqual(4);
  });

  it("a registry whose patterns cannot pass a slice never waits", async () => {
    const rules = compileRules([
      AgentDefinition.parse({ name: "small", triggers: { patterns: ["order\\s*#\\d{4}"] } }),
    ]);
    let turns = 0;
    await rules.matchInTurns(worst, Number.POSITIVE_INFINITY, async () => void turns++);
    expect(turns).toBe(0);
  });

  it("another route runs while a heavy one waits for its turn", async () => {
    const heavyRouter = compileRuleRouter([heavy, light]);
    const lightRouter = compileRuleRouter([light]);
    const order: string[] = [];
    const slow = heavyRouter.decideInTurns(worst).then(() => order.push("heavy"));
    // A request that arrives meanwhile is an event of its own: it runs at the next turn at the latest.
    await nextTurn();
    order.push(lightRouter.decide("refund please").agent ?? "none");
    await slow;
    expect(order).toEqual(["light", "heavy"]);
  });
});

describe("a search in turns", () => {
  it("answers like the search in one piece, for every catastrophic pattern and input of the corpus", async () => {
    const patterns = ["(a|a?)+b", "(a|aa)+$", "^(a+)+$", "(\\w*)*$", "(.*a){20}", "(ab|a)*c", "order\\s*#\\d{4}"];
    const inputs = [`${"a".repeat(900)}b`, "a".repeat(1000), `${"ab".repeat(400)}c`, `${"x ".repeat(300)}order #1234`];
    const rules = compileRules(
      patterns.map((p, i) => AgentDefinition.parse({ name: `p${i}`, triggers: { patterns: [p], priority: 100 } })),
    );
    let turns = 0;
    for (const input of inputs) {
      const own = await rules.matchInTurns(input, Number.POSITIVE_INFINITY, async () => void turns++);
      expect(own, input.slice(0, 20)).toEqual(rules.match(input));
    }
    // Each route waits once before its first slice; the searches were cut into more pieces than that.
    expect(turns).toBeGreaterThan(inputs.length);
  });
});
