import { RelayError } from "../errors";
import { checkPattern } from "../routing/rules/pattern-safety";
import type { AgentDefinition } from "../schemas/agent";

/**
 * Registry rules beyond the schema: every trigger pattern must be admitted by the rule
 * compiler. Throws INVALID_PATTERN naming each refused pattern and why.
 */
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
