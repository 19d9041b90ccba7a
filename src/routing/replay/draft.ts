import { RelayError } from "../../errors";
import type { AgentDefinition } from "../../schemas/agent";
import type { ReplayDraft } from "../../schemas/replay";

/**
 * The registry a draft describes (docs/routing.md, Replay): the current definitions with the
 * draft's agents added or replaced and its removals taken out, in name order. A draft that names
 * an agent twice, or both writes and removes one, is refused (VALIDATION_FAILED); removing an
 * agent the registry does not hold is AGENT_NOT_FOUND, as its DELETE would be.
 */
export function applyDraft(current: readonly AgentDefinition[], draft: ReplayDraft): AgentDefinition[] {
  const written = new Set<string>();
  for (const [i, agent] of draft.agents.entries()) {
    if (written.has(agent.name)) refuse(`draft.agents.${i}.name`, `names '${agent.name}' a second time`);
    written.add(agent.name);
  }
  const byName = new Map(current.map((agent) => [agent.name, agent]));
  for (const [i, name] of draft.remove.entries()) {
    if (written.has(name)) refuse(`draft.remove.${i}`, `'${name}' is in draft.agents too`);
    if (!byName.has(name)) throw new RelayError("AGENT_NOT_FOUND", `No agent named '${name}'.`, { agent: name });
    byName.delete(name);
  }
  for (const agent of draft.agents) byName.set(agent.name, agent);
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function refuse(path: string, message: string): never {
  throw new RelayError("VALIDATION_FAILED", `The draft ${message}.`, { issues: [{ path, message }] });
}
