import { describe, expect, it } from "vitest";
import { compileRules } from "../../../src/routing/rules/compile-rules";
import { PATTERN_PREFIX } from "../../../src/routing/rules/pattern-budget";
import { checkPattern } from "../../../src/routing/rules/pattern-safety";
import { AgentDefinition } from "../../../src/schemas/agent";

const agent = (name: string, keywords: string[], patterns: string[], priority: number): AgentDefinition =>
  AgentDefinition.parse({ name, triggers: { keywords, patterns, priority } });

/**
 * Known catastrophic patterns (the ReDoS literature's classics) against adversarial inputs
 * as long as the pattern tier reads (PATTERN_PREFIX code units). A backtracking engine — V8's own, which the rule tier used before — explores an
 * exponential (or high-polynomial) number of paths on each of these and would not answer in
 * any reasonable time; the rule tier's NFA answers each in one pass. The expected answers are
 * worked out by hand, since V8 cannot be asked.
 */

// Every input below fits the prefix the pattern tier reads (a match must lie within it).
const KIB30 = PATTERN_PREFIX - 2;
const as = "a".repeat(KIB30);

const CORPUS: { pattern: string; input: string; matches: boolean }[] = [
  { pattern: "(a|a?)+b", input: `${as}!`, matches: false },
  { pattern: "(a|a?)+b", input: `${as}b`, matches: true },
  { pattern: "(a|aa)+$", input: `${as}!`, matches: false },
  { pattern: "(a|aa)+$", input: as, matches: true },
  { pattern: "(a+)+$", input: `${as}!`, matches: false },
  { pattern: "^(a+)+$", input: as, matches: true },
  { pattern: "(\\w*)*$", input: `${as}!`, matches: true },
  { pattern: "^(\\w*)*$", input: `${as}!`, matches: false },
  { pattern: "(x+x+)+y", input: "x".repeat(KIB30), matches: false },
  { pattern: "^(a|a)*$", input: `${as}!`, matches: false },
  { pattern: "(.*a){20}", input: `${"a".repeat(19)}${"b".repeat(KIB30)}`, matches: false },
  { pattern: "(.*a){20}", input: `${"ba".repeat(KIB30 / 2)}`, matches: true },
  { pattern: "(\\d+\\s?)+$", input: `${"1".repeat(KIB30)}x`, matches: false },
  { pattern: "^(\\d+\\s?)+$", input: `${"1 ".repeat(KIB30 / 2)}`, matches: true },
  { pattern: "(.*){1,100}[bc]", input: as, matches: false },
  {
    pattern:
      "^([a-zA-Z0-9])(([\\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$",
    input: `${as}@x`,
    matches: false,
  },
  { pattern: "(ab|a)*c", input: `${"ab".repeat(KIB30 / 2)}`, matches: false },
  { pattern: "a(a|a?)+b", input: `${as}`, matches: false },
];

describe("linear-time matching of catastrophic patterns on inputs as long as the prefix", () => {
  it.each(CORPUS.map((c) => [c.pattern, c.matches, c] as const))(
    "%s answers %s",
    (_pattern, _matches, { pattern, input, matches }) => {
      expect(checkPattern(pattern)).toBeNull();
      const rules = compileRules([agent("target", [], [pattern], 100)]);
      expect(rules.stats.skippedPatterns).toEqual([]);
      expect(rules.match(input).map((m) => m.matched_patterns)).toEqual(matches ? [[pattern]] : []);
    },
  );

  it("answers for the whole corpus registered at once, on every adversarial input", () => {
    const rules = compileRules(CORPUS.map((c, i) => agent(`p${i}`, [], [c.pattern], 100)));
    for (const { input } of CORPUS) {
      const matched = new Set(rules.match(input).flatMap((m) => m.matched_patterns));
      for (const c of CORPUS.filter((k) => k.input === input))
        expect(matched.has(c.pattern), c.pattern).toBe(c.matches);
    }
  });

  it("a factor repeated through the input is tried a bounded number of times, then searched once", () => {
    // "order" occurs 170 times; trying the anchored pattern at each occurrence, reading to the
    // end each time, would be quadratic.
    const rules = compileRules([agent("o", [], ["order(\\s|x)*#\\d"], 100)]);
    expect(rules.stats.anchoredPatterns).toBe(1);
    expect(rules.match("order ".repeat(170))).toEqual([]);
    expect(rules.match(`${"order ".repeat(170)}#1`).map((m) => m.agent)).toEqual(["o"]);
  });
});

describe("the pattern tier reads the first PATTERN_PREFIX code units only", () => {
  const filler = "x ".repeat(PATTERN_PREFIX);
  const rules = compileRules([agent("p", ["refund"], ["order\\s*#\\d{4}", "thanks$", "(a|a?)+b"], 100)]);

  it("a match past the prefix is not found, while keywords still read the whole input", () => {
    expect(rules.match(`order #1234 ${filler}`)[0]?.matched_patterns).toEqual(["order\\s*#\\d{4}"]);
    const late = rules.match(`${filler} order #1234 refund`)[0];
    expect(late?.matched_patterns).toEqual([]);
    expect(late?.matched_keywords).toEqual(["refund"]);
  });

  it("a match must end within the prefix, and $ holds only at the input's real end", () => {
    const cut = "y".repeat(PATTERN_PREFIX - 8);
    expect(rules.match(`${cut}order #1234`)).toEqual([]); // the match would end past the prefix
    expect(rules.match(`${cut}thanks`)[0]?.matched_patterns).toEqual(["thanks$"]);
    expect(rules.match(`${"y".repeat(PATTERN_PREFIX - 6)}thanks and more`)).toEqual([]);
  });

  it("an input of any length costs the same pattern work as one of the prefix's length", () => {
    expect(rules.match(`${"a".repeat(PATTERN_PREFIX)}b`)).toEqual([]);
    expect(rules.match(`${"a".repeat(PATTERN_PREFIX - 1)}b`)[0]?.matched_patterns).toEqual(["(a|a?)+b"]);
  });
});
