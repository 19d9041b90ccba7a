/**
 * The rule tier's decision from its evidence (src/routing/rule-router.ts gathers it): the
 * chosen agent or "not mine", its candidates, and an explanation built only when read.
 */
import type { CandidateEvidence } from "./classifier/calibration";
import { explainDecision, type RuleExplanation } from "./classifier/explain";
import type { Classification, LexicalClassifier } from "./classifier/lexical-classifier";
import type { RuleCandidate, RuleDecision, RuleMatch } from "./types";

/** What a decision keeps to build its explanation when (if ever) it is read. */
interface ExplanationSource {
  classifier: LexicalClassifier;
  classification: Classification;
  candidates: ScoredCandidate[];
  value?: RuleExplanation | undefined;
}

const SOURCE = Symbol("explanation source");

/**
 * The `explanation` getter, one function shared by every decision: a getter closure per
 * decision gave each its own hidden class (V8 kept them all), and a class instance would not
 * survive Workers RPC or structured clone, which call this getter and copy a plain object.
 */
function readExplanation(this: { [SOURCE]: ExplanationSource }): RuleExplanation | undefined {
  const s = this[SOURCE];
  s.value ??= explainDecision(s.classifier, s.classification, s.candidates);
  return s.value;
}

/** Below this confidence the rule tier answers "not mine" (agent null). */
export const DECLINE_BELOW = 50;

/** One scored candidate with its raw evidence. */
export interface ScoredCandidate {
  /** The agent's index in its shard. */
  index: number;
  shard: number;
  agent: string;
  evidence: CandidateEvidence;
  match: RuleMatch | null;
  confidence: number;
}

/** The raw evidence behind a decision (what the calibration fit consumes). */
export interface RuleEvidence {
  /** Best first, at most `k`; empty when nothing is known about the input. */
  candidates: ScoredCandidate[];
  classification: Classification | null;
}

/** The decision that names no agent: nothing matched, or nothing is registered. */
export const NO_DECISION: RuleDecision = {
  agent: null,
  confidence: 0,
  score: 0,
  matched_keywords: [],
  matched_patterns: [],
  candidates: [],
};

/**
 * The decision the evidence makes: the best candidate when its confidence reaches
 * DECLINE_BELOW, else "not mine"; every candidate listed; the explanation built when first
 * read. `classifierOf` names the classifier of a candidate's shard.
 */
export function decisionOf(
  { candidates, classification }: RuleEvidence,
  classifierOf: (shard: number) => LexicalClassifier | null,
): RuleDecision {
  const best = candidates[0];
  const classifier = best === undefined ? null : classifierOf(best.shard);
  if (!best || classification === null || classifier === null) return { ...NO_DECISION, candidates: [] };
  const asCandidate = (s: ScoredCandidate): RuleCandidate => ({
    agent: s.agent,
    score: s.match?.score ?? 0,
    matched_keywords: s.match?.matched_keywords ?? [],
    matched_patterns: s.match?.matched_patterns ?? [],
    confidence: s.confidence,
  });
  const decision: RuleDecision = {
    agent: best.confidence >= DECLINE_BELOW ? best.agent : null,
    confidence: best.confidence,
    score: best.match?.score ?? 0,
    matched_keywords: best.match?.matched_keywords ?? [],
    matched_patterns: best.match?.matched_patterns ?? [],
    candidates: candidates.map(asCandidate),
  };
  // The explanation costs more than the decision, so it is built when first read (JSON,
  // spread, structured clone and RPC all read it, as an own enumerable property).
  // The explanation weighs the best candidate against the runner-up of its own shard.
  const source: ExplanationSource = {
    classifier,
    classification,
    candidates: candidates.filter((x) => x.shard === best.shard),
  };
  Object.defineProperty(decision, SOURCE, { value: source });
  Object.defineProperty(decision, "explanation", { get: readExplanation, enumerable: true, configurable: true });
  return decision;
}
