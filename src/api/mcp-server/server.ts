import { McpServer, preloadSchemas } from "@modelcontextprotocol/server";
import type { McpContext } from "./context";
import { registerResources } from "./resources";
import { registerRunTools } from "./run-tools";
import { registerTeamTools } from "./tools";

/**
 * Relay as an MCP server (docs/mcp-server.md): one server per `/mcp` request, for the tenant
 * the key named, with its tools and resources. Stateless: everything lives in Relay's own
 * sessions, so any request can reach any isolate.
 */
// The protocol's schemas are built as the isolate starts, not on its first MCP request: the
// package's workerd shim did this, and wrangler.toml's alias replaces that shim
// (src/interop/mcp-server-shims.ts, which cannot call it: the package imports the shim).
preloadSchemas();

export function relayMcpServer(ctx: McpContext): McpServer {
  const server = new McpServer(
    { name: "relay", title: "Relay", version: "0.1.0" },
    {
      instructions:
        "A Relay team of agents. route says who would take a request; send_message runs it (with routing and handoffs) and answers with the reply or what it waits for; answer_inbox approves, denies or replies to what waits for a person.",
    },
  );
  registerTeamTools(server, ctx);
  registerRunTools(server, ctx);
  registerResources(server, ctx);
  return server;
}
