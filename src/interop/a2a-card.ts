import type { AgentCard, AgentSkill } from "@a2a-js/sdk";
import type { AgentDefinition } from "../schemas/agent";
import { HANDOFF_EXTENSION_URI } from "./a2a-task";

/**
 * Relay's A2A 1.0 agent cards (docs/a2a.md), pure: one per agent (its skills from its
 * description, triggers and capabilities), one for the tenant's front door (a skill per
 * agent), and the card a caller without the tenant's key gets — the same for every name,
 * so it tells nothing but how to authenticate.
 */

export const A2A_PROTOCOL_VERSION = "1.0";
/** The security scheme Relay's cards declare: the tenant's API key as a bearer token. */
const SCHEME = "relay_api_key";
const MAX_EXAMPLES = 10;
const MAX_TAGS = 20;

const securitySchemes = {
  [SCHEME]: {
    scheme: {
      $case: "httpAuthSecurityScheme" as const,
      value: {
        description: "The tenant's Relay API key, as `Authorization: Bearer <key>`.",
        scheme: "Bearer",
        bearerFormat: "",
      },
    },
  },
};

function base(name: string, description: string, url: string, version: string): AgentCard {
  return {
    name,
    description,
    supportedInterfaces: [{ url, protocolBinding: "JSONRPC", tenant: "", protocolVersion: A2A_PROTOCOL_VERSION }],
    // Who runs the agent: this deployment (the spec's `url` is the provider's site, never empty).
    provider: { organization: "Relay", url: new URL(url).origin },
    version,
    capabilities: {
      streaming: true,
      pushNotifications: false,
      extendedAgentCard: true,
      extensions: [
        {
          uri: HANDOFF_EXTENSION_URI,
          description:
            'A remote agent Relay runs may hand the conversation to another agent by answering with a data part { "relay": { "transfer_to": "<agent>", "reason": "…" } }.',
          required: false,
          params: undefined,
        },
      ],
    },
    securitySchemes,
    securityRequirements: [{ schemes: { [SCHEME]: { list: [] } } }],
    defaultInputModes: ["text/plain", "application/json"],
    defaultOutputModes: ["text/plain"],
    skills: [],
    signatures: [],
  };
}

/** A skill; `tags` are REQUIRED by A2A 1.0, so one with nothing to tag is tagged by its own id. */
function skill(id: string, name: string, description: string, tags: string[], examples: string[]): AgentSkill {
  const tagged = [...new Set(tags)].slice(0, MAX_TAGS);
  return {
    id,
    name,
    description,
    tags: tagged.length > 0 ? tagged : [id],
    examples: examples.slice(0, MAX_EXAMPLES),
    inputModes: [],
    outputModes: [],
    securityRequirements: [],
  };
}

/** The agent's own skill: what it is for (description, trigger keywords and examples). */
function agentSkill(agent: AgentDefinition): AgentSkill {
  return skill(
    agent.name,
    agent.title ?? agent.name,
    agent.description || `The '${agent.name}' agent.`,
    [...agent.triggers.keywords, ...agent.capabilities.map((c) => c.name)],
    agent.triggers.examples,
  );
}

/** One agent's full card (for a caller with the tenant's key). `version`: the registry version it was read at. */
export function agentCard(agent: AgentDefinition, url: string, version: number): AgentCard {
  const card = base(agent.title ?? agent.name, agent.description || `The '${agent.name}' agent.`, url, String(version));
  card.skills = [
    agentSkill(agent),
    ...agent.capabilities.map((c) =>
      skill(`${agent.name}.${c.name}`, c.name, `${agent.title ?? agent.name}: ${c.name}.`, c.tags, []),
    ),
  ];
  return card;
}

/** The tenant's front door: Relay routes each new message to one of its agents (a skill each). */
export function frontDoorCard(agents: readonly AgentDefinition[], url: string, version: number): AgentCard {
  const card = base(
    "Relay",
    "Routes each request to the agent best suited for it (rules, then a model when unsure), runs it, and hands off between agents as the conversation needs.",
    url,
    String(version),
  );
  card.skills = agents.filter((a) => a.enabled).map(agentSkill);
  return card;
}

/**
 * What a caller without the tenant's key reads at any card address: how to authenticate, nothing
 * else. A2A 1.0 requires at least one skill, so it names the one every address has: talking to
 * the tenant's agents, once authenticated.
 */
export function publicCard(url: string): AgentCard {
  const card = base(
    "Relay agent",
    "Send the tenant's Relay API key (Authorization: Bearer) to read this card.",
    url,
    "0",
  );
  card.skills = [
    skill(
      "relay",
      "Relay agent",
      "Answers messages through Relay for callers with the tenant's API key; the authenticated card lists the agent's own skills.",
      ["relay"],
      [],
    ),
  ];
  return card;
}
