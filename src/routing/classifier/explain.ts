/**
 * Why the rule tier chose what it chose, in terms a person can check: the signals behind the
 * confidence, the examples the input resembles most, and the words that tipped the balance.
 */
import type { CandidateEvidence } from "./calibration";
import type { Classification, LexicalClassifier } from "./lexical-classifier";

/** The explanation attached to a rule decision. */
export interface RuleExplanation {
  /** The chosen (best) candidate, even when its confidence was too low to claim the input. */
  agent: string;
  /** The calibrated signals of the best candidate (see rule-router.ts). */
  signals: {
    probability: number;
    margin: number;
    similarity: number;
    known_mass: number;
    rule_hits: number;
    other_rule_hits: number;
    example_count: number;
  };
  /** The agent's training texts nearest to the input, with TF-IDF cosine similarity. */
  examples: { text: string; similarity: number }[];
  /** Input terms by their weight in (this agent's logit − the runner-up's); positive pulled here. */
  terms: { term: string; weight: number }[];
  /** The runner-up the terms are weighed against (null with a single agent). */
  versus: string | null;
  matched_keywords: string[];
  matched_patterns: string[];
}

/** What explainDecision needs of a candidate. */
export interface ExplainedCandidate {
  index: number;
  agent: string;
  evidence: CandidateEvidence;
  match: { matched_keywords: string[]; matched_patterns: string[] } | null;
}

const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;

/** How many examples and terms an explanation lists. */
export const EXPLAIN_EXAMPLES = 3;
export const EXPLAIN_TERMS = 5;

/** Builds the explanation of the best candidate. */
export function explainDecision(
  classifier: LexicalClassifier,
  c: Classification,
  candidates: readonly ExplainedCandidate[],
): RuleExplanation | undefined {
  const best = candidates[0];
  if (!best) return undefined;
  const runnerUp = candidates[1] ?? null;
  const e = best.evidence;
  const examples = classifier
    .nearest(c, best.index, EXPLAIN_EXAMPLES * 2)
    .map((n) => ({ text: classifier.exampleText(n.example), similarity: round(classifier.similarity(c, n.example)) }))
    .sort((x, y) => y.similarity - x.similarity)
    .slice(0, EXPLAIN_EXAMPLES);
  const terms = classifier
    .termContributions(c, best.index, runnerUp?.index ?? -1)
    .filter((t) => t.weight !== 0)
    .sort((x, y) => Math.abs(y.weight) - Math.abs(x.weight))
    .slice(0, EXPLAIN_TERMS)
    .map((t) => ({ term: t.term, weight: round(t.weight) }));
  return {
    agent: best.agent,
    signals: {
      probability: round(e.probability),
      margin: round(e.margin),
      similarity: round(e.similarity),
      known_mass: round(e.knownMass),
      rule_hits: e.ruleHits,
      other_rule_hits: e.otherRuleHits,
      example_count: e.exampleCount,
    },
    examples,
    terms,
    versus: runnerUp?.agent ?? null,
    matched_keywords: best.match?.matched_keywords ?? [],
    matched_patterns: best.match?.matched_patterns ?? [],
  };
}
