import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileRules } from "../../../src/routing/rules";
import { programCharge } from "../../../src/routing/rules/pattern-cost";
import { admitPattern } from "../../../src/routing/rules/pattern-safety";
import { ClassTable, PredicateTable } from "../../../src/routing/rules/pattern-verifier";
import { AgentDefinition } from "../../../src/schemas/agent";

/** The charge of an admitted pattern, or null when admission refuses it (too large). */
function charge(source: string) {
  const admitted = admitPattern(source, { classes: new ClassTable(), predicates: new PredicateTable() });
  return admitted.ok ? programCharge(admitted.program) : null;
}

const atom = fc.constantFrom(
  "a",
  "Z",
  "é",
  "Ω",
  "😀",
  ".",
  "\\d",
  "\\w",
  "\\s",
  "[a-f]",
  "[^0-9]",
  "[éa]",
  "\\p{L}",
  "\\P{N}",
  "\\p{Script=Greek}",
  "\\b",
  "\\B",
  "^",
  "$",
);
const quantifier = fc.constantFrom("", "", "?", "*", "+", "{2}", "{0,3}", "{1,}");
const pattern: fc.Arbitrary<string> = fc.letrec<{ seq: string; node: string }>((tie) => ({
  node: fc.oneof(
    { weight: 4, arbitrary: fc.tuple(atom, quantifier).map(([a, q]) => (/^[$^]|^\\[bB]$/.test(a) ? a : a + q)) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.array(tie("seq"), { minLength: 1, maxLength: 3 }), quantifier)
        .map(([alts, q]) => `(?:${alts.join("|")})${q}`),
    },
  ),
  seq: fc.array(tie("node"), { minLength: 1, maxLength: 4 }).map((nodes) => nodes.join("")),
})).seq;

describe("a pattern's charge", () => {
  it("is never less than its instruction count, whatever the pattern", () => {
    fc.assert(
      fc.property(pattern, (source) => {
        const c = charge(source);
        if (c !== null) expect(c.charge, source).toBeGreaterThanOrEqual(c.instructions);
      }),
      { numRuns: 500 },
    );
  });

  it("grows with the pattern: a longer sequence, one more repetition, one more alternative", () => {
    fc.assert(
      fc.property(pattern, pattern, fc.integer({ min: 1, max: 4 }), (p, q, n) => {
        const alone = charge(p);
        if (alone === null) return;
        for (const larger of [`${p}${q}`, `${q}${p}`, `(?:${p}){${n + 1}}`, `(?:${p})|(?:${q})`]) {
          const c = charge(larger);
          if (c !== null) expect(c.charge, `${larger} vs ${p}`).toBeGreaterThanOrEqual(alone.charge);
        }
        const fewer = charge(`(?:${p}){${n}}`);
        const more = charge(`(?:${p}){${n + 1}}`);
        if (fewer !== null && more !== null) expect(more.charge).toBeGreaterThan(fewer.charge);
      }),
      { numRuns: 300 },
    );
  });

  it("is the instruction count for ASCII literals, and names what costs more", () => {
    expect(charge("refund")).toEqual({ charge: 7, instructions: 7, costly: [] });
    expect(charge("[a-z]{4}")!.costly).toEqual(["class"]);
    expect(charge("r(?:é|e)fund")!.costly[0]).toBe("unicode_class");
    expect(charge("\\p{L}+")!.costly).toEqual(["unicode_class", "branch"]);
    // A predicate's regex call is charged once per distinct predicate, each of its uses as a table read.
    const one = charge("\\p{L}{2}")!;
    const two = charge("\\p{L}\\p{N}")!;
    expect(two.charge).toBeGreaterThan(one.charge);
    expect(charge("\\p{L}{3}")!.charge - one.charge).toBeLessThan(two.charge - one.charge);
  });
});

describe("the link keeps to the budget in charge", () => {
  const agent = (name: string, patterns: string[]) =>
    AgentDefinition.parse({ name, triggers: { patterns, priority: 100 } });

  it("admits ASCII patterns of a size whose non-ASCII twins it skips", () => {
    const budget = 1000;
    const ascii = compileRules([agent("plain", ["a{300}", "b{300}", "c{300}"])], { patternBudget: budget });
    expect(ascii.stats.skippedPatterns).toEqual([]);
    expect(ascii.stats.patternInstructions).toBe(903);
    const accents = compileRules([agent("accents", ["é{300}", "è{300}", "ê{300}"])], { patternBudget: budget });
    // Each predicate step costs more than a literal's, and the pattern pays its regex call too.
    expect(accents.stats.skippedPatterns.map((s) => s.pattern)).toContain("ê{300}");
    expect(accents.stats.patternInstructions).toBeGreaterThan(301);
    expect(accents.stats.patternInstructions).toBeLessThanOrEqual(budget);
  });
});
