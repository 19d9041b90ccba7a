import { describe, expect, it } from "vitest";
import {
  type CandidateEvidence,
  calibrationFeatures,
  confidenceOf,
  FEATURE_NAMES,
} from "../../../src/routing/classifier/calibration";
import { CALIBRATION_PARAMS } from "../../../src/routing/classifier/calibration-params";

const base: CandidateEvidence = {
  logit: 2,
  probability: 0.7,
  margin: 1,
  similarity: 0.4,
  knownMass: 0.6,
  ruleHits: 0,
  otherRuleHits: 0,
  exampleCount: 100,
  singleAgent: false,
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
      singleAgentWeights: FEATURE_NAMES.map((_, i) => (i === 0 ? 5 : 0)),
    };
    expect(confidenceOf(base, calibration)).toBe(50);
    expect(confidenceOf({ ...base, singleAgent: true }, calibration)).toBeGreaterThan(99);
  });

  it("stays within 0–100 for extreme evidence", () => {
    for (const margin of [-1e9, 0, 1e9]) {
      const v = confidenceOf({ ...base, margin });
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThanOrEqual(100);
    }
  });
});
