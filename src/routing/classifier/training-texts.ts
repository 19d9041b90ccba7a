/**
 * What each agent teaches the classifier. An agent with examples teaches its examples only: its
 * keywords already count through the rule tier (rule-router.ts), and as one-word examples they
 * taught the classifier that a common word ("charge", "help", "plan") is near-certain evidence
 * for the agent, pulling every input that uses it — on CLINC150 beside the demo agents, a point
 * of accuracy lost to their keywords (docs/scaling.md). An agent without examples falls back
 * to its keywords, title, description and name, so a keyword-only registry still gets a
 * classifier, and its confidence is calibrated for that case too.
 */
import type { AgentDefinition } from "../../schemas/agent";

/** The texts an agent contributes to the classifier. */
export function trainingTexts(agent: AgentDefinition): string[] {
  const { examples, keywords } = agent.triggers;
  if (examples.length > 0) return [...examples];
  const texts = [...keywords];
  if (agent.title) texts.push(agent.title);
  if (agent.description.trim() !== "") texts.push(agent.description);
  texts.push(agent.name.replace(/[-_]+/g, " "));
  return texts;
}
