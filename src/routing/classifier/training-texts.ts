/**
 * What each agent teaches the classifier. Examples are the main signal; keywords join them as
 * short examples (so "refund" also reaches "refunds" through stems and character grams); an
 * agent without examples falls back to its title, description and name, so a keyword-only
 * registry still gets a classifier, and its confidence is calibrated for that case too.
 */
import type { AgentDefinition } from "../../schemas/agent";

/** The texts an agent contributes to the classifier. */
export function trainingTexts(agent: AgentDefinition): string[] {
  const { examples, keywords } = agent.triggers;
  const texts = [...examples, ...keywords];
  if (examples.length > 0) return texts;
  if (agent.title) texts.push(agent.title);
  if (agent.description.trim() !== "") texts.push(agent.description);
  texts.push(agent.name.replace(/[-_]+/g, " "));
  return texts;
}
