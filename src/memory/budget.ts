import type { AgentDefinition } from "../schemas/agent";
import { type CompactionStrategy, DEFAULT_MEMORY_POLICY, type MemoryPolicy } from "../schemas/memory";
import { contextWindow } from "./context-windows";

/**
 * An agent's budget for one turn (docs/memory.md, Budgets): its policy with the model's
 * window filled in, and what the threshold and the summary come to in tokens.
 */
export interface TurnBudget {
  /** The most input tokens a turn may send. */
  max_input_tokens: number;
  /** Past this many, the view is compacted. */
  threshold: number;
  strategy: CompactionStrategy;
  keep_last: number;
  max_tool_output_tokens: number;
  /** The most a summary may take of the budget. */
  summary_tokens: number;
  /** The model that writes summaries. */
  summary_model: string;
  facts: boolean;
}

/** A summary takes at most this share of the budget, and never more than SUMMARY_CAP tokens. */
const SUMMARY_SHARE = 0.15;
const SUMMARY_CAP = 2000;

/** The policy an agent has: its own `memory`, or the defaults. */
export function memoryPolicy(agent: Pick<AgentDefinition, "memory">): MemoryPolicy {
  return agent.memory ?? DEFAULT_MEMORY_POLICY;
}

/** The agent's budget for a turn on `model`. */
export function turnBudget(agent: Pick<AgentDefinition, "memory">, model: string): TurnBudget {
  const policy = memoryPolicy(agent);
  const max = policy.max_input_tokens ?? contextWindow(model);
  return {
    max_input_tokens: max,
    threshold: Math.floor(max * policy.compact_at),
    strategy: policy.strategy,
    keep_last: policy.keep_last,
    // A tool output never takes more than a quarter of the budget, whatever the policy says.
    max_tool_output_tokens: Math.min(policy.max_tool_output_tokens, Math.floor(max / 4)),
    summary_tokens: Math.min(SUMMARY_CAP, Math.floor(max * SUMMARY_SHARE)),
    summary_model: policy.model ?? model,
    facts: policy.facts,
  };
}
