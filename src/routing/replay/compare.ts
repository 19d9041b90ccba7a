import type { ReplayMove, ReplayReport, ReplayScore, ReplayShift } from "../../schemas/replay";
import type { Outcome } from "./outcome";

/** One input routed by both routers. */
export interface ReplayPair {
  input: string;
  label?: string;
  before: Outcome;
  after: Outcome;
}

/** Example inputs per move or fallback change, and the size an example is cut to. */
export const EXAMPLES = 3;
export const EXAMPLE_CHARS = 200;
/** Confusion pairs and confidence shifts the answer lists at most. */
export const MOVES_LISTED = 100;
export const SHIFTS_LISTED = 10;

const example = (input: string) => (input.length > EXAMPLE_CHARS ? `${input.slice(0, EXAMPLE_CHARS - 1)}…` : input);

/** What a replay found: the comparison part of its answer. */
export type Comparison = Pick<ReplayReport, "moves" | "fallback" | "confidence" | "labelled"> & { moved: number };

/**
 * Compares the two routers' decisions of the same inputs (docs/routing.md, Replay): the inputs
 * that changed target as confusion pairs (from → to), those newly taken by the fallback and
 * those newly out of it, the confidence shifts, and with labels each router's score.
 */
export function compareOutcomes(pairs: readonly ReplayPair[]): Comparison {
  const moves = new Map<string, ReplayMove>();
  const entered: string[] = [];
  const left: string[] = [];
  let moved = 0;
  for (const { input, before, after } of pairs) {
    if (before.fallback !== after.fallback) (after.fallback ? entered : left).push(input);
    if (before.target === after.target) continue;
    moved++;
    const key = `${before.target}\u0000${after.target}`;
    const move = moves.get(key) ?? { from: before.target, to: after.target, count: 0, examples: [] };
    move.count++;
    if (move.examples.length < EXAMPLES) move.examples.push(example(input));
    moves.set(key, move);
  }
  const labelled = pairs.filter((p) => p.label !== undefined);
  return {
    moved,
    moves: [...moves.values()]
      .sort((a, b) => b.count - a.count || a.from.localeCompare(b.from) || a.to.localeCompare(b.to))
      .slice(0, MOVES_LISTED),
    fallback: {
      entered: { count: entered.length, examples: entered.slice(0, EXAMPLES).map(example) },
      left: { count: left.length, examples: left.slice(0, EXAMPLES).map(example) },
    },
    confidence: confidenceShifts(pairs),
    ...(labelled.length === 0
      ? {}
      : {
          labelled: {
            count: labelled.length,
            before: score(labelled.map((p) => [p.before, p.label!])),
            after: score(labelled.map((p) => [p.after, p.label!])),
          },
        }),
  };
}

function confidenceShifts(pairs: readonly ReplayPair[]): Comparison["confidence"] {
  if (pairs.length === 0) return { mean_delta: 0, median_delta: 0, largest: [] };
  const shifts: ReplayShift[] = pairs.map(({ input, before, after }) => ({
    input,
    from: before.target,
    to: after.target,
    before: before.confidence,
    after: after.confidence,
    delta: after.confidence - before.confidence,
  }));
  const deltas = shifts.map((s) => s.delta).sort((a, b) => a - b);
  const middle = deltas.length >> 1;
  const median = deltas.length % 2 === 1 ? deltas[middle]! : (deltas[middle - 1]! + deltas[middle]!) / 2;
  const largest = shifts
    .filter((s) => s.delta !== 0)
    .sort((a, b) => Math.abs(b.delta) - Math.abs(a.delta))
    .slice(0, SHIFTS_LISTED)
    .map((s) => ({ ...s, input: example(s.input) }));
  return { mean_delta: round(deltas.reduce((n, d) => n + d, 0) / deltas.length), median_delta: round(median), largest };
}

/** Accuracy, coverage and precision of one router over labelled inputs. */
function score(decided: readonly [Outcome, string][]): ReplayScore {
  const covered = decided.filter(([o]) => o.covered);
  const right = (list: readonly [Outcome, string][]) => list.filter(([o, label]) => o.target === label).length;
  return {
    accuracy: round(right(decided) / decided.length),
    coverage: round(covered.length / decided.length),
    precision: covered.length === 0 ? null : round(right(covered) / covered.length),
  };
}

const round = (n: number) => Math.round(n * 10_000) / 10_000;
