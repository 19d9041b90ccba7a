import { describe, expect, it } from "vitest";
import {
  type CandidateEvidence,
  calibrationFeatures,
  confidenceOf,
  EXAMPLE_KNOTS,
  FEATURE_NAMES,
  knotWeights,
  SIGNAL_NAMES,
} from "../../../src/routing/classifier/calibration";
import { CALIBRATION_PARAMS } from "../../../src/routing/classifier/calibration-params";

const base: CandidateEvidence = {
  logit: 2,
  probability: 0.7,
  margin: 1,
  countMargin: 1,
  similarity: 0.4,
  similarityMargin: 0.1,
  knownMass: 0.6,
  ruleHits: 0,
  otherRuleHits: 0,
  exampleCount: 100,
  singleAgent: false,
  agentCount: 3,
};

describe("calibration", () => {
  it("has one weight per feature", () => {
    expect(CALIBRATION_PARAMS.weights).toHaveLength(FEATURE_NAMES.length);
    expect(CALIBRATION_PARAMS.singleAgentWeights).toHaveLength(FEATURE_NAMES.length);
    expect(calibrationFeatures(base)).toHaveLength(FEATURE_NAMES.length);
  });

  it("rises with margin, similarity and known words; falls with rivals' rule hits", () => {
    const c = confidenceOf(base);
    expect(confidenceOf({ ...base, margin: 4, probability: 0.95 })).toBeGreaterThan(c);
    expect(confidenceOf({ ...base, similarity: 0.9 })).toBeGreaterThan(c);
    expect(confidenceOf({ ...base, knownMass: 1 })).toBeGreaterThan(c);
    expect(confidenceOf({ ...base, otherRuleHits: 2 })).toBeLessThan(c);
  });

  it("uses the one-agent weights for a registry of one agent", () => {
    const calibration = {
      ruleWeight: 1,
      weights: FEATURE_NAMES.map(() => 0),
      singleAgentWeights: FEATURE_NAMES.map((name) => (name.startsWith("bias") ? 5 : 0)),
    };
    expect(confidenceOf(base, calibration)).toBe(50);
    expect(confidenceOf({ ...base, singleAgent: true }, calibration)).toBeGreaterThan(99);
  });

  it("weighs each signal by the two example knots around the agent's example count", () => {
    expect(FEATURE_NAMES).toHaveLength(SIGNAL_NAMES.length * EXAMPLE_KNOTS.length);
    expect(knotWeights(0)).toEqual([1, 0, 0, 0]);
    expect(knotWeights(9)).toEqual([0, 1, 0, 0]);
    expect(knotWeights(99)).toEqual([0, 0, 1, 0]);
    expect(knotWeights(999)).toEqual([0, 0, 0, 1]);
    expect(knotWeights(1e6)).toEqual([0, 0, 0, 1]);
    const between = knotWeights(50);
    expect(between.reduce((s, w) => s + w, 0)).toBeCloseTo(1, 12);
    expect(between[1]).toBeGreaterThan(0);
    expect(between[2]).toBeGreaterThan(between[1] as number);
    // One signal's features: its value at each knot, scaled by the knot's weight.
    const x = calibrationFeatures({ ...base, exampleCount: 50 });
    const m = SIGNAL_NAMES.indexOf("margin");
    expect(x[SIGNAL_NAMES.length + m]).toBeCloseTo((between[1] as number) * base.margin, 12);
    expect(x[2 * SIGNAL_NAMES.length + m]).toBeCloseTo((between[2] as number) * base.margin, 12);
  });

  it("stays within 0–100 for extreme evidence", () => {
    for (const margin of [-1e9, 0, 1e9]) {
      const v = confidenceOf({ ...base, margin, countMargin: margin });
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThanOrEqual(100);
    }
  });
});
