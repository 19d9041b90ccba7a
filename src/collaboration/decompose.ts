import type { CompiledRules } from "../routing/types";
import type { AgentTask, TaskDecomposition } from "../schemas/collaboration";

/**
 * Relay's own decomposition of a request among a supervisor's agents, for when no model
 * does it (the offline `local` provider): the request is split into clauses (sentences,
 * and "and"/"also" between them), each clause goes to the agent whose triggers match it
 * best — the rule tier, restricted to the supervisor's whitelist — and an agent's clauses
 * become one task. Deterministic; it understands nothing a keyword does not.
 */

const CLAUSE_BREAK =
  /(?<=[.?!;])\s+|\s*,\s*(?:and|also|plus)\s+|\s+(?:and also|and then|and|also|plus)\s+(?=(?:what|how|when|where|which|who|is|are|can|could|will|would|should|do|does|find|book|tell|give|check|show)\b)/i;

export function clauses(text: string): string[] {
  return text
    .split(CLAUSE_BREAK)
    .map((c) => c.trim())
    .filter((c) => c.length > 0);
}

/** The decomposition, or null when no clause matches any candidate. */
export function decomposeByRules(
  query: string,
  candidates: readonly string[],
  rules: CompiledRules,
  timeout_s = 60,
): TaskDecomposition | null {
  const allowed = new Set(candidates);
  const byAgent = new Map<string, string[]>();
  for (const clause of clauses(query)) {
    const best = rules.match(clause).find((m) => allowed.has(m.agent));
    if (!best) continue;
    byAgent.set(best.agent, [...(byAgent.get(best.agent) ?? []), clause]);
  }
  if (byAgent.size === 0) return null;
  const tasks: AgentTask[] = [...byAgent.entries()].map(([agent, parts], i) => ({
    task_id: `task_${i + 1}`,
    agent,
    instruction: parts.join(" "),
    timeout_s,
  }));
  return { original_query: query, tasks, requires_aggregation: tasks.length > 1 };
}
