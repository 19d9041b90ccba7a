/**
 * What a pattern costs the work budget (docs/scaling.md, "The work budget"): its charge, in
 * units of one ASCII literal instruction's step over one code unit on its worst input. Each
 * instruction is charged the worst step cost of its kind over every alphabet, measured by
 * `bench/pattern-costs.bench.ts` (figures and machine in docs/scaling.md); a predicate (a
 * non-ASCII literal, `\p{…}`, a bracket holding more than ASCII) is also charged, once per
 * distinct predicate of the pattern, the V8 regex call that answers it at each position (the
 * matcher answers each predicate once per position, pattern-verifier.ts). So a pattern's
 * charge × the code units read bounds its search's time in units of an ASCII literal step,
 * whatever the input: the budget is stated in these units.
 */
import { Op } from "./pattern-verifier";

/** The instruction kinds a charge names (a refusal says which of them make a pattern costly). */
export type CostKind = "literal" | "any" | "class" | "unicode_class" | "branch" | "jump" | "assertion";

/**
 * Charge per instruction step, in ASCII literal steps: the largest ratio measured for the kind
 * over ASCII, Latin-1, case variants, CJK and astral input, rounded up to a quarter.
 * `unicode_class` here is the table read of a predicate answered already at this position.
 */
export const STEP_CHARGE: Readonly<Record<CostKind, number>> = {
  literal: 1,
  any: 1,
  class: 1.5,
  unicode_class: 1.5,
  branch: 1.5,
  jump: 1,
  assertion: 1,
};

/**
 * Charge of answering one distinct predicate at one position (a V8 regex call on one code
 * point), in ASCII literal steps, beyond its table read: the worst measured is about 15
 * (500 distinct `[\p{Lu}…]` in turn on Greek capitals, each regex's code cold), rounded up
 * with room for a registry holding more of them.
 */
export const PREDICATE_TEST_CHARGE = 24;

const KIND_OF: Record<Op, CostKind | null> = {
  [Op.Char]: "literal",
  [Op.Class]: "class",
  [Op.Any]: "any",
  [Op.Predicate]: "unicode_class",
  [Op.Split]: "branch",
  [Op.Jump]: "jump",
  [Op.Begin]: "assertion",
  [Op.End]: "assertion",
  [Op.WordBoundary]: "assertion",
  [Op.NotWordBoundary]: "assertion",
  [Op.Match]: null,
};

/** A pattern's charge, its instruction count, and the kinds that cost more than a literal, costliest first. */
export interface PatternCharge {
  charge: number;
  instructions: number;
  costly: CostKind[];
}

/**
 * The charge of the program in `code[from..to)` (instruction triples; predicate ids as the
 * program holds them). Never less than its instruction count: every instruction is charged at
 * least one unit (the final Match, run at most once per position too, is charged as a literal).
 */
export function programCharge(code: ArrayLike<number>, from = 0, to = code.length): PatternCharge {
  const extra = new Map<CostKind, number>();
  const predicates = new Set<number>();
  // Quarters of a step are exact in binary, so the sum is too.
  let total = 0;
  for (let at = from; at < to; at += 3) {
    const op = code[at] as Op;
    const kind = KIND_OF[op];
    const step = kind === null ? 1 : STEP_CHARGE[kind];
    total += step;
    let over = step - 1;
    if (op === Op.Predicate && !predicates.has(code[at + 1]!)) {
      predicates.add(code[at + 1]!);
      total += PREDICATE_TEST_CHARGE;
      over += PREDICATE_TEST_CHARGE;
    }
    if (kind !== null && over > 0) extra.set(kind, (extra.get(kind) ?? 0) + over);
  }
  const costly = [...extra].sort((a, b) => b[1] - a[1]).map(([kind]) => kind);
  return { charge: Math.ceil(total), instructions: (to - from) / 3, costly };
}
