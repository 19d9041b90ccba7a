/**
 * Calibrated confidence: the evidence about one candidate agent → P(routing there is right).
 *
 * A logistic model over a dozen signals (see `calibrationSignals`), each weighed by how many
 * examples the agent has (`knotWeights`), fitted offline on CLINC150 train by
 * `bench/fit-calibration.ts` (cross-validated: every row is scored by a router compiled without
 * it; out-of-scope rows count as wrong whatever the agent). Its parameters are the constants of
 * calibration-params.ts, which that script regenerates.
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
  /**
   * The same margin in the classifier's counted model (complement naive Bayes, beside the
   * trained one; without rules): a second opinion, whose agreement makes the first more reliable.
   */
  countMargin: number;
  /** Similarity of the input to this agent's nearest example over informative terms (0–1). */
  similarity: number;
  /**
   * This agent's nearest-example similarity minus the best other agent's (−1–1): whether the
   * example the input resembles most is this agent's.
   */
  similarityMargin: number;
  /** Share of the input's TF-IDF mass made of terms some example contains (0–1). */
  knownMass: number;
  /** Keyword hits + 2 × pattern hits of this agent (priority not applied). */
  ruleHits: number;
  /** The most rule hits any other agent has. */
  otherRuleHits: number;
  /** Whether the registry has this one agent only (the classifier then weighs it against "none"). */
  singleAgent: boolean;
  /** How many agents the registry routes among: a probability or margin means more among many. */
  agentCount: number;
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

/** The signals of a candidate, each of which gets its own weight per example regime (below). */
export const SIGNAL_NAMES = [
  "bias",
  "margin",
  "probability",
  "similarity",
  "known_mass",
  "similarity_margin",
  "count_margin",
  "log1p(rule_hits)",
  "log1p(other_rule_hits)",
  "log_agents",
  "margin × log_agents",
  "probability × log_agents",
  "margin × known_mass",
] as const;

/**
 * Example regimes, as log10(1 + the agent's real examples): none, about 10, 100 and 1,000.
 * What a margin or a similarity is worth depends on how much the classifier was shown, and not
 * along a straight line: each signal's weight is interpolated linearly between its weights at
 * these knots (a "tent" basis), so an agent with 150 examples is weighed mostly like one with
 * 100, and one with 1,200 like one with 1,000.
 */
export const EXAMPLE_KNOTS = [0, 1, 2, 3] as const;

/** Feature names, in the order of `calibrationFeatures`: every signal at every knot. */
export const FEATURE_NAMES: readonly string[] = EXAMPLE_KNOTS.flatMap((k) =>
  SIGNAL_NAMES.map((name) => `${name} @ ${k === 0 ? "no examples" : `10^${k} examples`}`),
);

const clamp = (x: number, lo: number, hi: number) => (x < lo ? lo : Math.min(x, hi));

/** The signals of one candidate (bias first), in the order of SIGNAL_NAMES. */
export function calibrationSignals(e: CandidateEvidence): number[] {
  const margin = clamp(e.margin, -8, 8);
  const logAgents = Math.log10(Math.max(1, e.agentCount));
  return [
    1,
    margin,
    e.probability,
    e.similarity,
    e.knownMass,
    e.similarityMargin,
    clamp(e.countMargin, -8, 8),
    Math.log1p(e.ruleHits),
    Math.log1p(e.otherRuleHits),
    logAgents,
    margin * logAgents,
    e.probability * logAgents,
    // A margin built on words the examples know says more than one built on a few of them.
    margin * e.knownMass,
  ];
}

/** The weight of each knot for an example count: two neighbouring knots share 1 (the last one takes the rest). */
export function knotWeights(exampleCount: number): number[] {
  const x = Math.log10(1 + Math.max(0, exampleCount));
  return EXAMPLE_KNOTS.map((k, i) => {
    const below = EXAMPLE_KNOTS[i - 1];
    const above = EXAMPLE_KNOTS[i + 1];
    if (x <= k) return below === undefined ? 1 : Math.max(0, (x - below) / (k - below));
    return above === undefined ? 1 : Math.max(0, (above - x) / (above - k));
  });
}

/** The feature vector of one candidate: its signals times each knot's weight (bias first). */
export function calibrationFeatures(e: CandidateEvidence): number[] {
  const signals = calibrationSignals(e);
  return knotWeights(e.exampleCount).flatMap((t) => signals.map((v) => v * t));
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
