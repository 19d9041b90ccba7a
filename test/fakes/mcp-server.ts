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
  /** Every tools/call the server ran, with the request's headers and its `_meta`. */
  calls: {
    tool: string;
    arguments: Record<string, unknown>;
    headers: Record<string, string>;
    meta: Record<string, unknown> | undefined;
  }[];
  /** JSON-RPC requests by method, in order. */
  methods: string[];
}

export function fakeMcpServer(
  url: string,
  options: {
    failList?: boolean;
    failCall?: boolean /** A tools/call answers after this long (its work done at once). */;
    callDelayMs?: number;
  } = {},
): FakeMcp {
  const calls: FakeMcp["calls"] = [];
  const methods: string[] = [];
  const handler = http.all(url, async ({ request }) => {
    const headers = Object.fromEntries(request.headers);
    let meta: Record<string, unknown> | undefined;
    if (request.method === "POST") {
      const body = (await request.clone().json()) as {
        method?: string;
        id?: unknown;
        params?: { _meta?: Record<string, unknown> };
      };
      meta = body.params?._meta;
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
        calls.push({ tool: "lookup_order", arguments: { order_id }, headers, meta });
        if (options.callDelayMs) await new Promise((resolve) => setTimeout(resolve, options.callDelayMs));
        return { content: [{ type: "text", text: `order ${order_id}: shipped` }] };
      },
    );
    server.registerTool("echo", { description: "Echoes", inputSchema: { text: z.string() } }, async ({ text }) => {
      calls.push({ tool: "echo", arguments: { text }, headers, meta });
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
