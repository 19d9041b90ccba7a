/**
 * Transfer tool names: `transfer_to_<agent>` with every non-identifier character replaced
 * by `_` (OpenAI Agents SDK parity). Replacement can make two agents share a name ("a-b" and
 * "a_b"), and model APIs cap tool names at 64 characters, so names are assigned for the whole
 * agent set at once, deterministically, and looked up in both directions.
 */

/** The longest tool name OpenAI-compatible APIs accept. */
export const MAX_TOOL_NAME_LENGTH = 64;

/** `transfer_to_<agent>`, lower-cased, non-identifier characters → `_` (uncapped, uncollided). */
export function transferToolName(agent: string): string {
  return `transfer_to_${agent.replace(/[^A-Za-z0-9_]/g, "_").toLowerCase()}`;
}

/** Tool name ↔ agent name, both ways, for one agent set. */
export interface TransferToolNames {
  toolByAgent: ReadonlyMap<string, string>;
  agentByTool: ReadonlyMap<string, string>;
}

function withSuffix(base: string, k: number): string {
  const suffix = `_${k}`;
  return `${base.slice(0, MAX_TOOL_NAME_LENGTH - suffix.length)}${suffix}`;
}

/**
 * Assigns each agent a unique tool name of at most 64 characters. Agents whose names map to
 * the same tool name keep it in this order — the one whose name needed no replacement first,
 * then by name — and the others get `_2`, `_3`, … (skipping any name another agent owns).
 * The result depends only on the set of names, never on their order.
 */
export function assignTransferToolNames(agents: readonly string[]): TransferToolNames {
  const groups = new Map<string, string[]>();
  for (const agent of new Set(agents)) {
    const base = transferToolName(agent).slice(0, MAX_TOOL_NAME_LENGTH);
    const group = groups.get(base);
    if (group) group.push(agent);
    else groups.set(base, [agent]);
  }
  // Every base name is reserved before any suffix is handed out, so a suffixed name never
  // takes the plain name of another agent.
  const taken = new Set(groups.keys());
  const toolByAgent = new Map<string, string>();
  const agentByTool = new Map<string, string>();
  const assign = (agent: string, tool: string): void => {
    toolByAgent.set(agent, tool);
    agentByTool.set(tool, agent);
  };
  for (const base of [...groups.keys()].sort()) {
    const members = (groups.get(base) ?? []).sort((a, b) => {
      const exactA = transferToolName(a) === `transfer_to_${a}` ? 0 : 1;
      const exactB = transferToolName(b) === `transfer_to_${b}` ? 0 : 1;
      return exactA - exactB || (a < b ? -1 : a > b ? 1 : 0);
    });
    members.forEach((agent, index) => {
      if (index === 0) {
        assign(agent, base);
        return;
      }
      let k = index + 1;
      while (taken.has(withSuffix(base, k))) k++;
      const tool = withSuffix(base, k);
      taken.add(tool);
      assign(agent, tool);
    });
  }
  return { toolByAgent, agentByTool };
}
