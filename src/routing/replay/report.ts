import type { ReplayReport } from "../../schemas/replay";
import { compareOutcomes } from "./compare";
import type { ReplayResult } from "./run";

/** What a replay answers besides the comparison. */
export interface ReplayFacts {
  source: ReplayReport["source"];
  registryVersion: number;
  /** Inputs selected (the result may cover fewer). */
  inputs: number;
  timings: ReplayReport["timings"];
}

/** The answer of `POST /v1/route/replay` (docs/routing.md, Replay) from a finished replay. */
export function replayReport(result: ReplayResult, facts: ReplayFacts): ReplayReport {
  const { moved, ...comparison } = compareOutcomes(result.pairs);
  return {
    source: facts.source,
    registry_version: facts.registryVersion,
    totals: {
      inputs: facts.inputs,
      replayed: result.pairs.length,
      complete: result.complete,
      moved,
      llm_calls: result.llmCalls,
      would_ask_llm: {
        current: result.pairs.filter((p) => p.before.wouldAskLlm).length,
        draft: result.pairs.filter((p) => p.after.wouldAskLlm).length,
      },
    },
    ...comparison,
    timings: facts.timings,
  };
}
