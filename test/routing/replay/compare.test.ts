import { describe, expect, it } from "vitest";
import { compareOutcomes, EXAMPLES, type ReplayPair } from "../../../src/routing/replay/compare";
import { FALLBACK_TARGET, LLM_TARGET, type Outcome } from "../../../src/routing/replay/outcome";

const to = (target: string, confidence = 90): Outcome => ({
  target,
  fallback: target === FALLBACK_TARGET,
  wouldAskLlm: target === LLM_TARGET,
  covered: !target.startsWith("@"),
  confidence,
});
const pair = (input: string, before: Outcome, after: Outcome, label?: string): ReplayPair => ({
  input,
  before,
  after,
  ...(label === undefined ? {} : { label }),
});

describe("compareOutcomes", () => {
  it("counts moves as confusion pairs, the largest first, with a few examples", () => {
    const pairs = [
      ...Array.from({ length: 5 }, (_, i) => pair(`refund ${i}`, to("billing"), to("sales"))),
      pair("hello", to("triage"), to(LLM_TARGET)),
      pair("same", to("billing"), to("billing")),
    ];
    const out = compareOutcomes(pairs);
    expect(out.moved).toBe(6);
    expect(out.moves).toEqual([
      { from: "billing", to: "sales", count: 5, examples: ["refund 0", "refund 1", "refund 2"].slice(0, EXAMPLES) },
      { from: "triage", to: LLM_TARGET, count: 1, examples: ["hello"] },
    ]);
  });

  it("tells inputs newly taken by the fallback from those newly out of it", () => {
    const out = compareOutcomes([
      pair("a", to("billing"), to(FALLBACK_TARGET)),
      pair("b", to(FALLBACK_TARGET), to("sales")),
      pair("c", to(FALLBACK_TARGET), to(FALLBACK_TARGET)),
      // Asking the LLM is not the fallback.
      pair("d", to(LLM_TARGET), to("sales")),
    ]);
    expect(out.fallback).toEqual({ entered: { count: 1, examples: ["a"] }, left: { count: 1, examples: ["b"] } });
  });

  it("gives the mean and median confidence delta and the largest shifts, biggest first", () => {
    const out = compareOutcomes([
      pair("up", to("billing", 50), to("billing", 90)),
      pair("down", to("sales", 80), to("sales", 70)),
      pair("flat", to("sales", 80), to("sales", 80)),
    ]);
    expect(out.confidence.mean_delta).toBe(10);
    expect(out.confidence.median_delta).toBe(0);
    expect(out.confidence.largest.map((s) => [s.input, s.delta])).toEqual([
      ["up", 40],
      ["down", -10],
    ]);
  });

  it("scores labelled inputs before and after: accuracy, coverage, precision", () => {
    const out = compareOutcomes([
      pair("a", to("billing"), to("sales"), "sales"),
      pair("b", to("billing"), to("billing"), "billing"),
      pair("c", to(LLM_TARGET), to("sales"), "billing"),
      pair("d", to(FALLBACK_TARGET), to(FALLBACK_TARGET), "sales"),
      pair("unlabelled", to("billing"), to("billing")),
    ]);
    expect(out.labelled).toEqual({
      count: 4,
      before: { accuracy: 0.25, coverage: 0.5, precision: 0.5 },
      after: { accuracy: 0.5, coverage: 0.75, precision: 0.6667 },
    });
  });

  it("has no scores without labels, and zeros for no inputs", () => {
    const out = compareOutcomes([]);
    expect(out.labelled).toBeUndefined();
    expect(out).toMatchObject({ moved: 0, moves: [], confidence: { mean_delta: 0, median_delta: 0, largest: [] } });
  });
});
