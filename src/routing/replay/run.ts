import type { RoutingConfig } from "../../schemas/routing";
import type { ListedAgent } from "../fallback";
import { decideRoute, type LlmOutcome } from "../hybrid";
import type { RoutableAgent } from "../llm/transfer-tools";
import type { RuleRouter } from "../types";
import type { ReplayPair } from "./compare";
import { NOT_CALLED, outcomeOf } from "./outcome";

/** One of the two routers a replay runs side by side. */
export interface ReplaySide {
  config: RoutingConfig;
  rules: RuleRouter;
  agents: readonly (RoutableAgent & ListedAgent)[];
}

export interface ReplayRun {
  inputs: readonly { input: string; label?: string }[];
  current: ReplaySide;
  draft: ReplaySide;
  /** Calls the LLM tier with a side's agents and config; absent: the tier is never called. */
  llm?: (side: ReplaySide, input: string) => Promise<LlmOutcome>;
  /** LLM calls allowed in all (both sides). */
  maxLlmCalls: number;
  /** Stop starting inputs once this many ms have passed (the answer then covers fewer). */
  budgetMs: number;
  now?: () => number;
}

export interface ReplayResult {
  pairs: ReplayPair[];
  complete: boolean;
  llmCalls: number;
}

/** Inputs decided between two yields: other requests of the isolate run between the groups. */
const YIELD_EVERY = 5;
const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/**
 * Routes every input through both routers with decideRoute (src/routing/hybrid.ts), the
 * decision every route makes. The LLM tier answers only while calls are left; otherwise it
 * answers NOT_CALLED and decideRoute reports the input as falling back for the LLM's failure,
 * which outcomeOf reads as "would ask the LLM". Changes nothing.
 */
export async function replayInputs(run: ReplayRun): Promise<ReplayResult> {
  const clock = run.now ?? (() => Date.now());
  const started = clock();
  let llmCalls = 0;
  const llmFor =
    (side: ReplaySide) =>
    async (input: string): Promise<LlmOutcome> => {
      if (run.llm === undefined || llmCalls >= run.maxLlmCalls) {
        const why = run.llm === undefined ? "a replay calls it only when asked (llm.max_calls)" : "llm.max_calls spent";
        return { ok: false, reason: NOT_CALLED, message: why, duration_ms: 0 };
      }
      llmCalls++;
      return run.llm(side, input);
    };
  const decide = async (side: ReplaySide, input: string) =>
    outcomeOf(
      await decideRoute({
        input,
        config: side.config,
        rules: side.rules,
        agents: fallbackAgents(side),
        llm: llmFor(side),
      }),
    );
  const pairs: ReplayPair[] = [];
  for (const [i, { input, label }] of run.inputs.entries()) {
    if (i > 0 && i % YIELD_EVERY === 0) {
      await tick();
      if (clock() - started > run.budgetMs) return { pairs, complete: false, llmCalls };
    }
    const before = await decide(run.current, input);
    const after = await decide(run.draft, input);
    pairs.push({ input, ...(label === undefined ? {} : { label }), before, after });
  }
  return { pairs, complete: true, llmCalls };
}

/**
 * The agents the fallback reads: only a default agent decides anything there (`prompt_user`
 * lists every enabled agent, which a replay does not report), so the list a replay of
 * thousands of inputs builds per unsure input stays empty.
 */
function fallbackAgents(side: ReplaySide): ReplaySide["agents"] {
  if (side.config.fallback !== "default_agent") return [];
  return side.agents.filter((a) => a.name === side.config.default_agent);
}
