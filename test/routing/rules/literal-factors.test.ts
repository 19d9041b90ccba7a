import { describe, expect, it } from "vitest";
import { requiredFactors } from "../../../src/routing/rules/literal-factors";
import { PATTERN_FLAGS } from "../../../src/routing/rules/pattern-safety";
import { randomPattern } from "./random-patterns";
import { prng } from "./reference-matcher";

describe("requiredFactors", () => {
  it.each([
    ["order\\s*#?\\d{6}", ["order"]],
    ["(refund|return)\\s+\\w+", ["refund", "return"]],
    ["(?:Refund|RETURN)", ["refund", "return"]],
    ["ab+cde", ["bcde"]],
    ["colou?r", ["colo"]],
    ["[a-z]+ing\\b", ["ing"]],
    ["^ticket-\\d+$", ["ticket-"]],
    ["www\\.example\\.com", ["www.example.com"]],
    ["(?<id>acct)\\d+", ["acct"]],
    ["(?i:promo)code", ["promo"]],
    ["ref\\x75nd", ["ref"]],
    ["r\\u00e9sum\\u00e9", ["sum"]],
    ["caf\u00e9s", ["caf"]],
    ["(?:foo|(?:bar|qux)z)end", ["end"]],
    ["(?:alpha|beta)+", ["alpha", "beta"]],
    ["(?:alpha|beta){2,3}", ["alpha", "beta"]],
  ])("%s → %j", (source, factors) => {
    expect(requiredFactors(source)).toEqual(factors);
  });

  it.each([
    ["\\d{3}-\\d{4}", "only short literals"],
    ["(abc|)", "an empty branch can match without the literal"],
    ["(?:refund)?\\d+", "an optional group"],
    ["(?:refund)*x", "a starred group"],
    ["(refund|\\d+)", "a branch with no literal"],
    ["a(?=bcdef)", "lookahead content is not consumed here"],
    ["r\\x75\\u00e9d", "escapes and non-ASCII break runs into short pieces"],
    ["ab c", "whitespace is not a literal (the scanner collapses whitespace)"],
    ["a{0}bcd{0}", "{0} makes the character optional, leaving bc"],
    ["(?:ab)+", "too short"],
  ])("%s → none (%s)", (source) => {
    expect(requiredFactors(source)).toBeNull();
  });

  it("never includes whitespace or non-ASCII in a factor, and lower-cases letters", () => {
    expect(requiredFactors("HELLO\\s+WORLD")).toEqual(["hello"]);
    expect(requiredFactors("naïve-user")).toEqual(["ve-user"]);
  });

  it("is sound: every generated match of a random pattern contains one of its factors", () => {
    const rand = prng(7);
    let withFactors = 0;
    for (let n = 0; n < 3000; n++) {
      const { source, sample } = randomPattern(rand);
      const regex = new RegExp(source, PATTERN_FLAGS);
      if (!regex.test(sample)) continue;
      const factors = requiredFactors(source);
      if (factors === null) continue;
      withFactors++;
      const folded = sample.replace(/ſ/g, "s").toLowerCase();
      expect(factors.some((f) => folded.includes(f)), `${source} / ${JSON.stringify(sample)} / ${factors}`).toBe(true);
    }
    expect(withFactors).toBeGreaterThan(500);
  });
});
