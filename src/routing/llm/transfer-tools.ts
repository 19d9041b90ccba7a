/**
 * What the LLM router shows the model: a system prompt listing the enabled agents and one
 * `transfer_to_<agent>` function tool per enabled agent (docs/routing.md, The tiers). Disabled agents are
 * never offered, so the model cannot pick them.
 */
import type { ChatMessage, ToolSpec } from "../../providers/types";
import { assignTransferToolNames, type TransferToolNames } from "./tool-names";

/** The fields of an agent definition the LLM tier reads (`AgentDefinition` satisfies it). */
export interface RoutableAgent {
  name: string;
  title?: string;
  description: string;
  enabled: boolean;
  triggers: { keywords: readonly string[] };
}

/** The arguments every transfer tool takes: a required reason, optional context for the target. */
export const TRANSFER_PARAMETERS: Record<string, unknown> = {
  type: "object",
  properties: {
    reason: { type: "string", description: "Why this agent should handle the message, in one sentence." },
    context: { type: "string", description: "Anything the agent needs to know that the message does not say plainly." },
  },
  required: ["reason"],
  additionalProperties: false,
};

/** The transfer tools for the enabled agents (registry order) and the name lookups built with them. */
export interface TransferTools extends TransferToolNames {
  tools: ToolSpec[];
}

/** How much of a description and how many keywords the prompt carries per agent. */
const PROMPT_DESCRIPTION_CHARS = 300;
const PROMPT_KEYWORDS = 8;

function titleOf(agent: RoutableAgent): string {
  return agent.title ?? agent.name;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** One tool per enabled agent: `transfer_to_<agent>`, "Hand off to <title>: <description>". */
export function buildTransferTools(agents: readonly RoutableAgent[]): TransferTools {
  const enabled = agents.filter((agent) => agent.enabled);
  const names = assignTransferToolNames(enabled.map((agent) => agent.name));
  const tools: ToolSpec[] = enabled.map((agent) => {
    const description = oneLine(agent.description);
    return {
      type: "function",
      function: {
        name: names.toolByAgent.get(agent.name) ?? agent.name,
        description: description ? `Hand off to ${titleOf(agent)}: ${description}` : `Hand off to ${titleOf(agent)}.`,
        parameters: TRANSFER_PARAMETERS,
      },
    };
  });
  return { tools, ...names };
}

/**
 * The router's system message: the task, then each enabled agent with its tool name,
 * title, description (shortened) and a few keywords. Pass the `TransferTools` already built
 * for the same agents to reuse their names.
 */
export function buildRouterPrompt(
  agents: readonly RoutableAgent[],
  transfer = buildTransferTools(agents),
): ChatMessage {
  const lines = agents
    .filter((agent) => agent.enabled)
    .map((agent) => {
      const tool = transfer.toolByAgent.get(agent.name) ?? agent.name;
      const description = oneLine(agent.description);
      const short =
        description.length > PROMPT_DESCRIPTION_CHARS
          ? `${description.slice(0, PROMPT_DESCRIPTION_CHARS - 1)}…`
          : description;
      const keywords = agent.triggers.keywords.slice(0, PROMPT_KEYWORDS).map(oneLine);
      let line = `- ${agent.name} (${oneLine(titleOf(agent))}), tool ${tool}`;
      if (short) line += `: ${short}`;
      if (keywords.length > 0) line += ` Keywords: ${keywords.join(", ")}.`;
      return line;
    });
  const content = [
    "You are the router of a multi-agent application. Hand the user's message to the one agent best suited to handle it by calling that agent's transfer tool.",
    "Call exactly one transfer tool and do not answer the user yourself.",
    "In `reason`, say in one sentence why that agent fits; in `context`, optionally add what the agent should know that the message does not say plainly.",
    "",
    lines.length > 0 ? "Agents:" : "No agents are available.",
    ...lines,
  ].join("\n");
  return { role: "system", content };
}
