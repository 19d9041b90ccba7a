import { RelayError } from "../errors";
import { patternCharge, type RulePart } from "../routing/rules/compile-rules";
import { PATTERN_BUDGET } from "../routing/rules/pattern-budget";
import { checkPattern } from "../routing/rules/pattern-safety";
import type { AgentDefinition } from "../schemas/agent";
import { compileCondition } from "../triggers/condition";

/**
 * Registry rules beyond the schema: every trigger pattern must be admitted by the rule
 * compiler (INVALID_PATTERN), and every handoff condition and trigger expression must parse
 * (INVALID_EXPRESSION, with the position). Throws naming what was refused and why.
 */
export function checkAgent(agent: AgentDefinition): void {
  checkAgentPatterns(agent);
  checkAgentExpressions(agent);
}

function checkAgentExpressions(agent: AgentDefinition): void {
  for (const [i, entry] of agent.handoffs.entries()) {
    const sources: [string, string | undefined][] = [
      [`handoffs.${i}.condition`, entry.condition],
      [`handoffs.${i}.trigger.expression`, entry.trigger?.expression],
    ];
    for (const [path, source] of sources) {
      if (source === undefined) continue;
      const compiled = compileCondition(source);
      if (!compiled.ok) {
        throw new RelayError("INVALID_EXPRESSION", `Agent '${agent.name}', ${path}: ${compiled.error.message}`, {
          agent: agent.name,
          path,
          ...(compiled.error.details as object),
        });
      }
    }
  }
}

export function checkAgentPatterns(agent: AgentDefinition): void {
  const refused = agent.triggers.patterns
    .map((pattern, index) => ({ index, pattern, reason: checkPattern(pattern) }))
    .filter((entry): entry is { index: number; pattern: string; reason: string } => entry.reason !== null);
  if (refused.length > 0) {
    const first = refused[0]!;
    throw new RelayError(
      "INVALID_PATTERN",
      `Agent '${agent.name}': pattern ${JSON.stringify(first.pattern)} ${first.reason}.`,
      { agent: agent.name, patterns: refused },
    );
  }
}

/**
 * The tenant's pattern budget (docs/scaling.md): an agent is admitted when its patterns' charge
 * (pattern-cost.ts, in ASCII literal steps) and the other agents' together stay within the
 * budget. Null when admitted, else the error, naming the tenant's total with this agent, the
 * limit, and the agent's costliest pattern with its charge and the kinds that make it costly.
 * A disabled agent costs nothing (its patterns never run).
 */
export function patternBudgetError(
  agent: string,
  part: { enabled: boolean; rules: RulePart },
  others: number,
  budget = PATTERN_BUDGET,
): RelayError | null {
  if (!part.enabled) return null;
  const charges = part.rules.patterns.map((p) => ({ pattern: p.source, ...patternCharge(p) }));
  const cost = charges.reduce((sum, c) => sum + c.charge, 0);
  const total = others + cost;
  if (total <= budget) return null;
  const costliest = charges.reduce((a, b) => (b.charge > a.charge ? b : a));
  const why = costliest.costly.length > 0 ? ` (${costliest.costly.join(", ")})` : "";
  return new RelayError(
    "PATTERN_BUDGET_EXCEEDED",
    `Agent '${agent}': its patterns charge ${cost} units, which would bring the tenant's patterns to ${total}; the limit is ${budget}. The costliest, ${JSON.stringify(costliest.pattern)}, charges ${costliest.charge} for ${costliest.instructions} instructions${why}.`,
    {
      agent,
      agent_instructions: cost,
      tenant_instructions: total,
      limit: budget,
      pattern: costliest.pattern,
      charge: costliest.charge,
      instructions: costliest.instructions,
      costly: costliest.costly,
    },
  );
}
