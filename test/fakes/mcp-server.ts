import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { type HttpHandler, HttpResponse, http } from "msw";
import { z } from "zod";

/**
 * An MCP tool server for msw, built with the official SDK (McpServer over its Web-standard
 * Streamable HTTP transport, stateless: each request its own server), so what Relay talks
 * to is the real protocol. It serves `lookup_order` and `echo`, records every call, and can
 * answer `tools/list` or `tools/call` with a JSON-RPC error.
 */
export interface FakeMcp {
  handler: HttpHandler;
  calls: { tool: string; arguments: Record<string, unknown>; headers: Record<string, string> }[];
  /** JSON-RPC requests by method, in order. */
  methods: string[];
}

export function fakeMcpServer(url: string, options: { failList?: boolean; failCall?: boolean } = {}): FakeMcp {
  const calls: FakeMcp["calls"] = [];
  const methods: string[] = [];
  const handler = http.all(url, async ({ request }) => {
    const headers = Object.fromEntries(request.headers);
    if (request.method === "POST") {
      const body = (await request.clone().json()) as { method?: string; id?: unknown };
      if (body.method) methods.push(body.method);
      if (options.failCall && body.method === "tools/call")
        return HttpResponse.json({
          jsonrpc: "2.0",
          id: body.id ?? null,
          error: { code: -32000, message: "the order system is down" },
        });
      if (options.failList && body.method === "tools/list")
        return HttpResponse.json({
          jsonrpc: "2.0",
          id: body.id ?? null,
          error: { code: -32603, message: "the tool index is down" },
        });
    }
    const server = new McpServer({ name: "fake-tools", version: "1.0.0" });
    server.registerTool(
      "lookup_order",
      { description: "Looks an order up by id", inputSchema: { order_id: z.string() } },
      async ({ order_id }) => {
        calls.push({ tool: "lookup_order", arguments: { order_id }, headers });
        return { content: [{ type: "text", text: `order ${order_id}: shipped` }] };
      },
    );
    server.registerTool("echo", { description: "Echoes", inputSchema: { text: z.string() } }, async ({ text }) => {
      calls.push({ tool: "echo", arguments: { text }, headers });
      return { content: [{ type: "text", text }] };
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    return transport.handleRequest(request as unknown as Request);
  });
  return { handler, calls, methods };
}
