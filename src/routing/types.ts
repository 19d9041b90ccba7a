/**
 * The contracts between the routing tiers. Each tier says when it is not sure (no match,
 * low confidence) rather than guessing; the hybrid decides what to do about it.
 */

/** What the compiled keyword/pattern rules found for one agent (the rule score, docs/routing.md). */
export interface RuleMatch {
  agent: string;
  /** (10 × keyword hits + 20 × pattern hits) × priority / 100, rounded: the rule score (docs/routing.md). */
  score: number;
  matched_keywords: string[];
  matched_patterns: string[];
}

/** Rules compiled from a registry snapshot: one pass over the input for all agents. */
export interface CompiledRules {
  /** Agents with a score > 0, highest first (ties: registry order). */
  match(input: string): RuleMatch[];
}

/** One candidate of the rule tier's decision, with its own confidence. */
export interface RuleCandidate extends RuleMatch {
  /** 0–100. */
  confidence: number;
}

/** The rule tier's decision: the best agent or none, and how sure it is. */
export interface RuleDecision {
  agent: string | null;
  /** 0–100; the hybrid trusts the decision alone when confidence ≥ threshold. */
  confidence: number;
  score: number;
  matched_keywords: string[];
  matched_patterns: string[];
  /** Best first, at most 3. */
  candidates: RuleCandidate[];
  explanation?: unknown;
}

/** The compiled rule tier the hybrid calls: rules plus whatever evidence the registry offers. */
export interface RuleRouter {
  decide(input: string): RuleDecision;
  /**
   * `decide` for a route that may wait: heavy pattern work runs in slices, each at its turn
   * in the isolate's lane (rules/lane.ts), so it never holds the isolate for long.
   */
  decideInTurns(input: string, turn?: () => Promise<void>): Promise<RuleDecision>;
  /** Approximate bytes held by the compiled structures (reported by /v1/route/stats). */
  readonly memoryBytes: number;
}
