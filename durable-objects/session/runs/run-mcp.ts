import type { Env } from "../../../src/env";
import type { ErrorBody } from "../../../src/errors";
import { expandMcpTools, type McpFunctionTool, type McpListedTool, mcpServersOf } from "../../../src/interop/mcp";
import { callMcpTool, listMcpTools } from "../../../src/outbound/mcp-tool";
import type { AgentDefinition } from "../../../src/schemas/agent";
import type { PendingCall } from "../../../src/schemas/run";
import type { ToolDefinition } from "../../../src/schemas/tool";
import { mcpOutbound } from "../../../src/services/outbound";
import type { AgentDirectory } from "../../../src/services/registry-cache";
import type { TraceContext } from "../../../src/telemetry/trace-context";

/**
 * MCP tool servers in a run (docs/mcp.md): the servers an agent's `tools.allow` names are
 * listed (once per registry version per isolate; a refresh bumps the version) and stand for
 * their tools in the agent and registry the run uses; a call to one of those tools goes to
 * its server. Approvals, guardrails, audit and trace are the run's, as for an http tool: a
 * listing made for a turn carries that turn's trace context, as its calls do.
 */

type Listing = Awaited<ReturnType<typeof listMcpTools>>;

const listings = new Map<string, Promise<Listing>>();

/**
 * A server's tools at the tenant's registry version: one listing per version per isolate
 * (failures are not kept). The listing is sent in `trace`, the context of the turn that
 * needed it first; a turn that finds it made sends nothing.
 */
function listing(
  env: Env,
  tenant: string,
  version: number,
  server: ToolDefinition,
  trace: (() => TraceContext) | undefined,
): Promise<Listing> {
  const key = `${tenant}:${server.name}@${version}`;
  let entry = listings.get(key);
  if (!entry) {
    entry = mcpOutbound(env, tenant, server).then((outbound) =>
      listMcpTools(server, trace ? { ...outbound, trace: trace() } : outbound),
    );
    listings.set(key, entry);
    void entry.then((result) => {
      if (!result.ok) listings.delete(key);
      else
        for (const other of listings.keys())
          if (other.startsWith(`${tenant}:${server.name}@`) && other !== key) listings.delete(other);
    });
  }
  return entry;
}

/**
 * The agent and directory a run's turn uses, with the MCP servers its allow list names
 * expanded into their tools; MCP_ERROR when a server could not list them (or the vault's code
 * when a header's secret could not be read). `trace`: the turn's context, read only when a
 * server is listed (docs/observability.md, Propagation).
 */
export async function withMcpTools(
  env: Env,
  tenant: string,
  directory: AgentDirectory,
  agent: AgentDefinition,
  trace?: () => TraceContext,
): Promise<{ ok: true; agent: AgentDefinition; directory: AgentDirectory } | { ok: false; error: ErrorBody }> {
  const servers = mcpServersOf(agent, directory.tools);
  if (servers.length === 0) return { ok: true, agent, directory };
  const listed = new Map<string, McpListedTool[]>();
  for (const [i, result] of (
    await Promise.all(servers.map((s) => listing(env, tenant, directory.version, s, trace)))
  ).entries()) {
    const server = servers[i]!;
    if (!result.ok)
      return {
        ok: false,
        error: { code: result.code, message: result.message, details: { tool: server.name, agent: agent.name } },
      };
    listed.set(server.name, result.tools);
  }
  const expanded = expandMcpTools(agent, directory.tools, listed);
  const byName = new Map(directory.byName);
  byName.set(agent.name, expanded.agent);
  return { ok: true, agent: expanded.agent, directory: { ...directory, byName, tools: expanded.tools } };
}

/** One call of a server's tool; `<session id>:<call id>` is its idempotency id (the same on every attempt). */
export async function runMcpCall(
  env: Env,
  tenant: string,
  sessionId: string,
  tool: McpFunctionTool,
  call: PendingCall,
  trace?: TraceContext,
): Promise<{ ok: boolean; output: string; duration_ms: number }> {
  let args: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(call.arguments || "{}") as unknown;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) args = parsed as Record<string, unknown>;
  } catch {
    // Arguments were checked against the tool's schema before the call was planned.
  }
  const server = {
    name: tool.mcp.server,
    url: tool.url,
    timeout_s: tool.timeout_s,
    max_response_bytes: tool.max_response_bytes,
  };
  return callMcpTool(server, { function_name: tool.name, name: tool.mcp.tool }, args, `${sessionId}:${call.id}`, {
    ...(await mcpOutbound(env, tenant, { name: tool.mcp.server, headers: tool.headers })),
    ...(trace ? { trace } : {}),
  });
}
