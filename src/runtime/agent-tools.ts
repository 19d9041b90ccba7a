import { returnTarget } from "../handoff/chain";
import type { ToolSpec } from "../providers/types";
import { assignTransferToolNames, MAX_TOOL_NAME_LENGTH } from "../routing/llm/tool-names";
import { TRANSFER_PARAMETERS } from "../routing/llm/transfer-tools";
import type { AgentDefinition, HandoffSpec } from "../schemas/agent";
import type { ToolDefinition } from "../schemas/tool";
import { checkCondition } from "../triggers/condition";

/**
 * The tools an agent is offered for one turn (docs/runs.md, Handoff tools): one
 * `transfer_to_<target>` per whitelist entry that can be taken now, `return_to_<agent>`
 * when the stack has someone to return to, `escalate_to_human`, and the registry tools
 * its `tools.allow` names. OpenAI Agents SDK
 * parity — tool names with non-identifier characters as `_`, a default description from
 * the target, typed input from the entry's `input_schema`, entries whose condition is
 * false not offered — and past it: the return tool, and the whitelist kept for the error
 * a hallucinated or forbidden call gets back.
 */

export const ESCALATE_TOOL = "escalate_to_human";

/** What calling a tool does. */
export type ToolBinding =
  | { kind: "transfer"; target: string; entry: HandoffSpec }
  | { kind: "return"; target: string }
  | { kind: "escalate" }
  /** A registry tool: run over HTTP by Relay, or by the API client. */
  | { kind: "function"; tool: ToolDefinition }
  /** Talking to another agent (docs/collaboration.md): ask (a query it answers), notify, broadcast. */
  | { kind: "peer"; action: "ask" | "notify" | "broadcast" | "fan_out"; parameters: Record<string, unknown> }
  /** The memory's own tools (docs/memory.md), answered by the session at once. */
  | { kind: "memory"; parameters: Record<string, unknown> };

export interface AgentTools {
  tools: ToolSpec[];
  /** Tool name → what it does, for every tool offered. */
  bindings: ReadonlyMap<string, ToolBinding>;
  /** The agent's whole whitelist, for the error a call outside the offered tools gets. */
  allowed_targets: string[];
  /** The registry tools offered, by name: what a refused tool call's error lists. */
  allowed_tools: string[];
}

export interface AgentToolsInput {
  agent: AgentDefinition;
  /** The tenant's agents by name. */
  directory: ReadonlyMap<string, AgentDefinition>;
  /** The session's stack, root first, this agent last. */
  stack: readonly string[];
  /** Session state, for the entries' conditions. */
  state: Record<string, unknown>;
  /** The tenant's tool registry, by name. */
  registry_tools: ReadonlyMap<string, ToolDefinition>;
}

const ESCALATE_PARAMETERS: Record<string, unknown> = {
  type: "object",
  properties: {
    reason: { type: "string", description: "What the person should decide or do, in one or two sentences." },
  },
  required: ["reason"],
  additionalProperties: false,
};

function titleOf(agent: AgentDefinition): string {
  return agent.title ?? agent.name;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** `return_to_<agent>`, as transfer names are made. */
export function returnToolName(agent: string): string {
  return `return_to_${agent.replace(/[^A-Za-z0-9_]/g, "_").toLowerCase()}`.slice(0, MAX_TOOL_NAME_LENGTH);
}

/** An entry's tool parameters: the reason, plus `input` typed by the entry's input_schema when it has one. */
function transferParameters(entry: HandoffSpec): Record<string, unknown> {
  if (!entry.input_schema) return TRANSFER_PARAMETERS;
  return {
    type: "object",
    properties: {
      reason: { type: "string", description: "Why this agent should take over, in one sentence." },
      input: entry.input_schema,
    },
    required: ["reason", "input"],
    additionalProperties: false,
  };
}

/**
 * Whether an entry can be taken now: its target exists and is enabled, is not on the stack, and its
 * condition holds.
 */
function offered(entry: HandoffSpec, input: AgentToolsInput): AgentDefinition | null {
  const target = input.directory.get(entry.to);
  if (!target?.enabled || input.stack.includes(entry.to)) return null;
  if (entry.condition !== undefined) {
    const holds = checkCondition(entry.condition, input.state);
    if (!holds.ok || !holds.value) return null;
  }
  return target;
}

export function agentTools(input: AgentToolsInput): AgentTools {
  const { agent } = input;
  const entries = agent.handoffs.flatMap((entry) => {
    const target = offered(entry, input);
    return target ? [{ entry, target }] : [];
  });
  const names = assignTransferToolNames(entries.map((e) => e.target.name));
  const tools: ToolSpec[] = [];
  const bindings = new Map<string, ToolBinding>();
  for (const { entry, target } of entries) {
    const name = names.toolByAgent.get(target.name)!;
    const described = oneLine(target.description);
    const description =
      entry.description ??
      (described ? `Hand off to ${titleOf(target)}: ${described}` : `Hand off to ${titleOf(target)}.`);
    tools.push({ type: "function", function: { name, description, parameters: transferParameters(entry) } });
    bindings.set(name, { kind: "transfer", target: target.name, entry });
  }
  const back = returnTarget(input.stack);
  const backAgent = back === null ? undefined : input.directory.get(back);
  if (back !== null) {
    const name = returnToolName(back);
    const described = backAgent ? oneLine(backAgent.description) : "";
    const title = backAgent ? titleOf(backAgent) : back;
    const description = described
      ? `Hand back to ${title}: ${described}`
      : `Hand the conversation back to ${title}, who handed it to you.`;
    tools.push({ type: "function", function: { name, description, parameters: TRANSFER_PARAMETERS } });
    bindings.set(name, { kind: "return", target: back });
  }
  tools.push({
    type: "function",
    function: {
      name: ESCALATE_TOOL,
      description: "Escalate to a human: a person answers from the inbox, and the conversation waits for them.",
      parameters: ESCALATE_PARAMETERS,
    },
  });
  bindings.set(ESCALATE_TOOL, { kind: "escalate" });
  // Allowed names the registry does not hold are not offered: nothing could run them.
  const allowed = [...new Set(agent.tools.allow)].flatMap((name) => {
    const tool = input.registry_tools.get(name);
    return tool ? [tool] : [];
  });
  for (const tool of allowed) {
    tools.push({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    });
    bindings.set(tool.name, { kind: "function", tool });
  }
  // The agents it works with — its whitelist's enabled model and webhook agents — can be
  // asked, told, or all told, with the agent-to-agent tools its tools.allow names.
  const peers = agent.handoffs
    .map((h) => input.directory.get(h.to))
    .filter((a): a is AgentDefinition => !!a && a.enabled && (a.kind === "llm" || a.kind === "webhook"))
    .map((a) => a.name);
  for (const peer of peerTools(peers).filter((p) => agent.tools.allow.includes(p.spec.function.name))) {
    tools.push(peer.spec);
    bindings.set(peer.spec.function.name, peer.binding);
  }
  return {
    tools,
    bindings,
    allowed_targets: agent.handoffs.map((h) => h.to),
    allowed_tools: [
      ...allowed.map((t) => t.name),
      ...tools.filter((t) => bindings.get(t.function.name)?.kind === "peer").map((t) => t.function.name),
    ],
  };
}

/**
 * The tools with the memory's own added (`read_tool_output`, `remember`, `forget`), when a
 * registry tool of the agent's does not already take the name.
 */
export function withMemoryTools(tools: AgentTools, memory: readonly ToolSpec[]): AgentTools {
  const added = memory.filter((spec) => !tools.bindings.has(spec.function.name));
  if (added.length === 0) return tools;
  const bindings = new Map(tools.bindings);
  for (const spec of added) bindings.set(spec.function.name, { kind: "memory", parameters: spec.function.parameters });
  return { ...tools, tools: [...tools.tools, ...added], bindings };
}

/** Names of the agent-to-agent tools (a registry tool may not take them). */
export const PEER_TOOLS = {
  ask: "ask_agent",
  notify: "notify_agent",
  broadcast: "broadcast",
  fan_out: "fan_out",
} as const;

function peerTools(peers: readonly string[]): { spec: ToolSpec; binding: Extract<ToolBinding, { kind: "peer" }> }[] {
  if (peers.length === 0) return [];
  const agent = { type: "string", enum: [...peers], description: "The agent." };
  const make = (
    action: "ask" | "notify" | "broadcast" | "fan_out",
    description: string,
    properties: Record<string, unknown>,
    required: string[],
  ) => {
    const parameters = { type: "object", properties, required, additionalProperties: false };
    return {
      spec: { type: "function" as const, function: { name: PEER_TOOLS[action], description, parameters } },
      binding: { kind: "peer" as const, action, parameters },
    };
  };
  return [
    make(
      "ask",
      "Ask another agent a question and wait for its answer (it keeps the conversation; you get its reply).",
      { agent, question: { type: "string", description: "The question, with what it needs to answer." } },
      ["agent", "question"],
    ),
    make("notify", "Tell another agent something; it does not answer.", { agent, message: { type: "string" } }, [
      "agent",
      "message",
    ]),
    make(
      "broadcast",
      "Tell every agent you work with something; with capabilities, learn which of them can do it best.",
      {
        message: { type: "string" },
        capabilities: { type: "array", items: { type: "string" }, description: "Capabilities you need (optional)." },
      },
      ["message"],
    ),
    make(
      "fan_out",
      "Split the work into tasks for the agents you work with; they run in parallel and you get their results aggregated.",
      {
        tasks: {
          type: "array",
          minItems: 1,
          items: {
            type: "object",
            properties: { agent, instruction: { type: "string" } },
            required: ["agent", "instruction"],
            additionalProperties: false,
          },
        },
      },
      ["tasks"],
    ),
  ];
}
