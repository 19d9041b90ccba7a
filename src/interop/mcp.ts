import type { AgentDefinition } from "../schemas/agent";
import type { ToolDefinition } from "../schemas/tool";

/**
 * MCP tool servers as Relay tools (docs/mcp.md), pure: which servers an agent's `tools.allow`
 * reaches, the function name a model sees for each of a server's tools, and the agent as a
 * turn sees it — its allow and confirmation lists with every server named in them replaced
 * by that server's tools, and those tools in the registry beside the others.
 */

/** The longest function name OpenAI-compatible endpoints accept. */
const MAX_FUNCTION_NAME = 64;

/** Between a server's registry name and its tool's name in the function name a model sees. */
export const MCP_NAME_SEPARATOR = "__";

/** One tool as an MCP server lists it (`tools/list`). */
export interface McpListedTool {
  name: string;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
}

/** A server's tool as a turn offers it: a registry tool of kind `mcp` with the server and the tool's own name. */
export type McpFunctionTool = ToolDefinition & { mcp: { server: string; tool: string } };

export const isMcpFunction = (tool: ToolDefinition | undefined): tool is McpFunctionTool =>
  tool !== undefined && "mcp" in tool;

/**
 * The function name of a server's tool: `<server>__<tool>`, every character other than a
 * letter, digit, `_` or `-` replaced by `_`, cut to 64 characters (what models accept).
 */
export function mcpFunctionName(server: string, tool: string): string {
  return `${server}${MCP_NAME_SEPARATOR}${tool}`.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, MAX_FUNCTION_NAME);
}

/** The mcp servers (registry tools of kind `mcp`) an agent's allow list names, whole or by one of their tools. */
export function mcpServersOf(
  agent: Pick<AgentDefinition, "tools">,
  registry: ReadonlyMap<string, ToolDefinition>,
): ToolDefinition[] {
  const names = new Set<string>();
  for (const entry of [...agent.tools.allow, ...agent.tools.confirmation.require]) {
    const server = registry.get(entry)?.kind === "mcp" ? entry : serverPrefix(entry, registry);
    if (server) names.add(server);
  }
  return [...names].map((name) => registry.get(name)!);
}

/** The mcp server a `<server>__<tool>` entry names, if any. */
function serverPrefix(entry: string, registry: ReadonlyMap<string, ToolDefinition>): string | null {
  for (let at = entry.indexOf(MCP_NAME_SEPARATOR); at > 0; at = entry.indexOf(MCP_NAME_SEPARATOR, at + 1)) {
    const name = entry.slice(0, at);
    if (registry.get(name)?.kind === "mcp") return name;
  }
  return null;
}

/** The listed tools a server offers agents: all, or those its `tools` allow-list names. */
export function offeredTools(server: ToolDefinition, listed: readonly McpListedTool[]): McpListedTool[] {
  return server.tools ? listed.filter((t) => server.tools!.includes(t.name)) : [...listed];
}

/** A listed tool as a registry tool a turn can offer and run. */
export function functionTool(server: ToolDefinition, listed: McpListedTool): McpFunctionTool {
  const schema = listed.inputSchema?.type === "object" ? listed.inputSchema : { type: "object", properties: {} };
  return {
    name: mcpFunctionName(server.name, listed.name),
    description: (listed.description ?? "").slice(0, 4000),
    kind: "mcp",
    parameters: schema,
    url: server.url,
    ...(server.headers ? { headers: server.headers } : {}),
    timeout_s: server.timeout_s,
    max_response_bytes: server.max_response_bytes,
    mcp: { server: server.name, tool: listed.name },
  };
}

/**
 * The agent and registry a turn uses: each server named in `tools.allow` (or
 * `tools.confirmation.require`) stands for all its offered tools, and each `<server>__<tool>`
 * for that one; the servers' tools join the registry under their function names (a registry
 * tool of the same name keeps it). `listings` holds each named server's listed tools.
 */
export function expandMcpTools(
  agent: AgentDefinition,
  registry: ReadonlyMap<string, ToolDefinition>,
  listings: ReadonlyMap<string, readonly McpListedTool[]>,
): { agent: AgentDefinition; tools: Map<string, ToolDefinition> } {
  const tools = new Map(registry);
  const byServer = new Map<string, string[]>();
  for (const [serverName, listed] of listings) {
    const server = registry.get(serverName);
    if (server?.kind !== "mcp") continue;
    const names: string[] = [];
    for (const tool of offeredTools(server, listed)) {
      const fn = functionTool(server, tool);
      if (tools.has(fn.name)) continue;
      tools.set(fn.name, fn);
      names.push(fn.name);
    }
    byServer.set(serverName, names);
  }
  const expand = (entries: readonly string[]) => [
    ...new Set(
      entries.flatMap((entry) => (registry.get(entry)?.kind === "mcp" ? (byServer.get(entry) ?? []) : [entry])),
    ),
  ];
  return {
    agent: {
      ...agent,
      tools: {
        ...agent.tools,
        allow: expand(agent.tools.allow),
        confirmation: { ...agent.tools.confirmation, require: expand(agent.tools.confirmation.require) },
      },
    },
    tools,
  };
}

/** One content block of a `tools/call` result. */
export interface McpContent {
  type: string;
  text?: string;
  [key: string]: unknown;
}

/**
 * A `tools/call` result as the text the model sees: the text blocks joined, other blocks
 * and structured content as JSON; a result marked `isError` is an error output.
 */
export function callOutput(
  tool: string,
  result: { content?: readonly McpContent[]; structuredContent?: unknown; isError?: boolean },
): { ok: boolean; output: string } {
  const parts = (result.content ?? []).map((block) =>
    block.type === "text" && typeof block.text === "string" ? block.text : JSON.stringify(block),
  );
  if (parts.length === 0 && result.structuredContent !== undefined)
    parts.push(JSON.stringify(result.structuredContent));
  const text = parts.join("\n");
  return result.isError
    ? { ok: false, output: `Error: '${tool}' reported an error: ${text}` }
    : { ok: true, output: text };
}
