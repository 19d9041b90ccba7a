import type { AgentSummary, RouteDecision, RoutingConfig } from "../schemas/routing";

/** The fields of an agent the fallback reads (`AgentDefinition` has them). */
export interface ListedAgent {
  name: string;
  title?: string;
  description: string;
  enabled: boolean;
}

/** The agent list a user can pick from: enabled agents, with their titles and descriptions. */
export function agentSummaries(agents: readonly ListedAgent[]): AgentSummary[] {
  return agents
    .filter((agent) => agent.enabled)
    .map((agent) => ({ name: agent.name, title: agent.title ?? agent.name, description: agent.description }));
}

/**
 * What routing answers when no tier decided (docs/routing.md, The tiers): `none` names no agent,
 * `prompt_user` hands the caller the agent list to choose from, `default_agent` names the
 * configured agent — unless it is missing or disabled, which degrades to `prompt_user`
 * so a broken setting never routes to nowhere silently.
 */
export function applyFallback(
  config: RoutingConfig,
  agents: readonly ListedAgent[],
  reason: string,
): Pick<RouteDecision, "agent" | "method" | "fallback"> {
  switch (config.fallback) {
    case "none":
      return { agent: null, method: "none", fallback: { strategy: "none", reason } };
    case "prompt_user":
      return {
        agent: null,
        method: "fallback",
        fallback: { strategy: "prompt_user", reason, agents: agentSummaries(agents) },
      };
    case "default_agent": {
      const target = agents.find((agent) => agent.name === config.default_agent && agent.enabled);
      if (target) return { agent: target.name, method: "fallback", fallback: { strategy: "default_agent", reason } };
      return {
        agent: null,
        method: "fallback",
        fallback: {
          strategy: "prompt_user",
          reason: `${reason}; default agent '${config.default_agent ?? ""}' is not an enabled agent`,
          agents: agentSummaries(agents),
        },
      };
    }
  }
}
