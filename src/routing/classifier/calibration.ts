/**
 * Calibrated confidence: the evidence about one candidate agent → P(routing there is right).
 *
 * A logistic model over a handful of signals (see `calibrationFeatures`), fitted offline on
 * CLINC150 train by `bench/fit-calibration.ts` (cross-validated: every row is scored by a
 * router compiled without it; out-of-scope rows count as wrong whatever the agent). Its
 * parameters are the constants of calibration-params.ts, which that script regenerates.
 */
import { CALIBRATION_PARAMS } from "./calibration-params";

/** Everything the router knows about one candidate agent for one input. */
export interface CandidateEvidence {
  /** Combined logit: classifier logit + rule weight × rule score / 10. */
  logit: number;
  /** Softmax of the combined logits over all agents (0–1). */
  probability: number;
  /** This candidate's combined logit minus the best other agent's (negative when not first). */
  margin: number;
  /** Similarity of the input to this agent's nearest example over informative terms (0–1). */
  similarity: number;
  /** Share of the input's TF-IDF mass made of terms some example contains (0–1). */
  knownMass: number;
  /** Keyword hits + 2 × pattern hits of this agent (priority not applied). */
  ruleHits: number;
  /** The most rule hits any other agent has. */
  otherRuleHits: number;
  /** Whether the registry has this one agent only (the classifier then weighs it against "none"). */
  singleAgent: boolean;
  /** How many real examples the agent was given (not counting keywords or its description). */
  exampleCount: number;
}

/** Logistic parameters: one weight per feature of `calibrationFeatures`, bias first. */
export interface Calibration {
  /** Weight of the rule score (÷10) added to the classifier's logit when choosing the agent. */
  ruleWeight: number;
  /**
   * How fast the rule weight falls with the agent's real examples: it is divided by
   * 1 + ruleDecay × log10(1 + examples) (0: the same for every agent).
   */
  ruleDecay?: number;
  weights: readonly number[];
  /**
   * Weights for a registry of one agent: its classifier weighs the agent against "none of
   * these" instead of against other agents, so its signals mean something else.
   */
  singleAgentWeights: readonly number[];
}

/**
 * Feature names, in the order of `calibrationFeatures`. The four classifier signals enter
 * alone, times has_examples (1 when the agent has real examples) and times
 * log10(1 + example count): how far they can be trusted depends on how much the classifier
 * was shown, so each gets its own slope per regime.
 */
export const FEATURE_NAMES = [
  "bias",
  "margin",
  "probability",
  "similarity",
  "known_mass",
  "margin × has_examples",
  "probability × has_examples",
  "similarity × has_examples",
  "known_mass × has_examples",
  "margin × log_examples",
  "probability × log_examples",
  "similarity × log_examples",
  "known_mass × log_examples",
  "log1p(rule_hits)",
  "log1p(other_rule_hits)",
  "has_examples",
  "log_examples",
] as const;

const clamp = (x: number, lo: number, hi: number) => (x < lo ? lo : Math.min(x, hi));

/** The feature vector of one candidate (bias first). */
export function calibrationFeatures(e: CandidateEvidence): number[] {
  const ex = e.exampleCount > 0 ? 1 : 0;
  const lg = Math.log10(1 + e.exampleCount);
  const margin = clamp(e.margin, -8, 8);
  return [
    1,
    margin,
    e.probability,
    e.similarity,
    e.knownMass,
    margin * ex,
    e.probability * ex,
    e.similarity * ex,
    e.knownMass * ex,
    margin * lg,
    e.probability * lg,
    e.similarity * lg,
    e.knownMass * lg,
    Math.log1p(e.ruleHits),
    Math.log1p(e.otherRuleHits),
    ex,
    lg,
  ];
}

/** P(correct) of a candidate under a calibration, as 0–1. */
export function probabilityCorrect(e: CandidateEvidence, calibration: Calibration = CALIBRATION_PARAMS): number {
  const f = calibrationFeatures(e);
  let z = 0;
  const w = e.singleAgent ? calibration.singleAgentWeights : calibration.weights;
  for (let i = 0; i < f.length; i++) z += (f[i] as number) * (w[i] ?? 0);
  return 1 / (1 + Math.exp(-z));
}

/** Confidence 0–100 (one decimal) of a candidate. */
export function confidenceOf(e: CandidateEvidence, calibration: Calibration = CALIBRATION_PARAMS): number {
  return Math.round(probabilityCorrect(e, calibration) * 1000) / 10;
}
