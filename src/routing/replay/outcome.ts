import type { RouteResult } from "../hybrid";

/** Where an input went when the rules were unsure and the LLM tier was not called. */
export const LLM_TARGET = "@llm";
/** Where an input went when the fallback took it and named no agent. */
export const FALLBACK_TARGET = "@fallback";
/** The reason a replay's LLM tier gives when it is not called: decideRoute reports it as the LLM's failure. */
export const NOT_CALLED = "not_called";

/** One router's decision of one input, as a replay compares it. */
export interface Outcome {
  /** An agent's name, LLM_TARGET or FALLBACK_TARGET. */
  target: string;
  /** The fallback decided (not an unasked LLM tier). */
  fallback: boolean;
  /** The rules were unsure and the LLM tier would have been asked. */
  wouldAskLlm: boolean;
  /** A tier (rules or LLM) named the agent. */
  covered: boolean;
  confidence: number;
}

/**
 * Reads a decision made with an LLM tier that was not called: decideRoute then falls back with
 * the tier's failure, `not_called: …`, in `llm.error` — that input would have gone to the LLM.
 */
export function outcomeOf(decision: RouteResult): Outcome {
  const wouldAskLlm = decision.llm?.error?.startsWith(`${NOT_CALLED}:`) === true;
  return {
    target: wouldAskLlm ? LLM_TARGET : (decision.agent ?? FALLBACK_TARGET),
    fallback: !wouldAskLlm && decision.fallback !== undefined,
    wouldAskLlm,
    covered: decision.method === "rule" || decision.method === "llm",
    confidence: decision.confidence,
  };
}
