import { describe, expect, it } from "vitest";
import { requiredFactors } from "../../../src/routing/rules/literal-factors";
import { PATTERN_FLAGS } from "../../../src/routing/rules/pattern-safety";
import { randomPattern } from "./random-patterns";
import { prng } from "./reference-matcher";

const factorsOf = (source: string): string[] | null => requiredFactors(source)?.factors ?? null;

describe("requiredFactors", () => {
  it.each([
    ["order\\s*#?\\d{6}", ["order"], true],
    ["(refund|return)\\s+\\w+", ["refund", "return"], true],
    ["(?:Refund|RETURN)", ["refund", "return"], true],
    ["re(fund|turn)s?", ["refund", "return"], true],
    ["\\bvip\\b", ["vip"], true],
    ["(?<=\\s)acct\\d", ["acct"], true],
    ["ab+cde", ["bcde"], false],
    ["colou?r", ["colo"], true],
    ["[a-z]+ing\\b", ["ing"], false],
    ["^ticket-\\d+$", ["ticket-"], true],
    ["www\\.example\\.com", ["www.example.com"], true],
    ["(?<id>acct)\\d+", ["acct"], true],
    ["(?i:promo)code", ["promo"], true],
    ["(?:foo|(?:bar|qux)z)end", ["foo", "bar", "qux"], true],
    ["x(?:foo|bar)end", ["xfoo", "xbar"], true],
    ["\\d(?:foo|bar)end", ["end"], false],
    ["(?:alpha|beta)+", ["alpha", "beta"], true],
    ["(?:alpha|beta){2,3}", ["alpha", "beta"], true],
    ["ref\\x75nd", ["ref"], true],
    ["r\\u00e9sum\\u00e9", ["sum"], false],
    ["caf\u00e9s", ["caf"], true],
  ])("%s → %j (anchored: %s)", (source, factors, anchored) => {
    expect(requiredFactors(source)).toMatchObject({ factors, anchored });
  });

  const nextOf = (source: string): string | null => {
    const next = requiredFactors(source)?.next;
    if (!next) return null;
    const ascii = [...next.subarray(0, 128)].map((bit, i) => (bit ? String.fromCharCode(i) : "")).join("");
    return next[128] ? `${ascii}+non-ascii` : ascii;
  };

  it.each([
    ["order\\s*#?\\d{6}", "\t\n\v\f\r #0123456789+non-ascii"],
    ["(refund|return)\\s+\\w+", "\t\n\v\f\r +non-ascii"],
    ["tk12-\\d{3,5}", "0123456789"],
    ["colou?r", "RUru"],
    ["abc(?:de|x)?k", "DKXdkx+non-ascii"],
    ["(?:abc|abd)\\.", "."],
    ["(?:abc\\d|xyz)q", "0123456789Qq"],
  ])("after %s the next unit must be in %j", (source, expected) => {
    expect(nextOf(source)).toBe(expected);
  });

  it.each(["\\bvip\\b", "refund", "(?:alpha|beta)+x", "ab+c", "(abc)\\1?", "(?:abc|abd(?:e)?)", "abc(?:de|xs)"])(
    "says nothing about what follows %s (it may end, repeat or be any unit)",
    (source) => {
      expect(nextOf(source)).toBeNull();
    },
  );

  it("marks a leading \\b on every branch", () => {
    expect(requiredFactors("\\bvip")?.boundaryBefore).toBe(true);
    expect(requiredFactors("^\\b(?:vip|gold)")?.boundaryBefore).toBe(true);
    expect(requiredFactors("\\bvip|gold")?.boundaryBefore).toBe(false);
    expect(requiredFactors("vip\\b")?.boundaryBefore).toBe(false);
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
    expect(factorsOf(source)).toBeNull();
  });

  it("never includes whitespace or non-ASCII in a factor, and lower-cases letters", () => {
    expect(factorsOf("HELLO\\s+WORLD")).toEqual(["hello"]);
    expect(factorsOf("naïve-user")).toEqual(["ve-user"]);
  });

  it("is sound: every generated match of a random pattern contains one of its factors", () => {
    const rand = prng(7);
    let withFactors = 0;
    for (let n = 0; n < 3000; n++) {
      const { source, sample } = randomPattern(rand);
      const regex = new RegExp(source, PATTERN_FLAGS);
      if (!regex.test(sample)) continue;
      const found = requiredFactors(source);
      if (found === null) continue;
      withFactors++;
      const folded = sample.replace(/ſ/g, "s").toLowerCase();
      const where = `${source} / ${JSON.stringify(sample)} / ${JSON.stringify(found)}`;
      expect(
        found.factors.some((f) => folded.includes(f)),
        where,
      ).toBe(true);
      if (found.anchored) {
        // Every match starts with a factor (so does the leftmost one), then a unit in `next`.
        const start = regex.exec(sample)!.index; // ſ, K and ASCII keep their length when folded
        const factor = found.factors.filter((f) => folded.startsWith(f, start));
        expect(factor.length, where).toBeGreaterThan(0);
        if (found.next) {
          const ok = factor.some((f) => {
            const unit = sample.charCodeAt(start + f.length);
            return !Number.isNaN(unit) && found.next![Math.min(unit, 128)] === 1;
          });
          expect(ok, where).toBe(true);
        }
      }
    }
    expect(withFactors).toBeGreaterThan(500);
  });
});
