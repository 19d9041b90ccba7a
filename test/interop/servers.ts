import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

/**
 * The other servers of the interop suite: an MCP tool server built with the official SDK
 * (McpServer over its Streamable HTTP transport, stateless), one with no tools at all
 * (whose `tools/list` the SDK answers with a JSON-RPC error), and the bad remote agents.
 */

export interface Listening {
  url: string;
  stop(): Promise<void>;
}

async function listen(port: number, handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> {
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return server;
}

const close = (server: Server) => () => new Promise<void>((resolve) => server.close(() => resolve()));

async function readJson(req: IncomingMessage): Promise<unknown> {
  let text = "";
  for await (const chunk of req) text += chunk;
  return text ? JSON.parse(text) : undefined;
}

/** `/mcp`: a parcel tracker with one tool, `track_parcel`; `/empty`: a server with no tools. Calls are recorded. */
export async function startMcpServers(
  port: number,
): Promise<Listening & { calls: { parcel: string; authorization: string | undefined }[] }> {
  const calls: { parcel: string; authorization: string | undefined }[] = [];
  const server = await listen(port, async (req, res) => {
    const body = req.method === "POST" ? await readJson(req) : undefined;
    const mcp = new McpServer({ name: "parcels", version: "1.0.0" });
    if (req.url === "/mcp") {
      mcp.registerTool(
        "track_parcel",
        { description: "Where a parcel is now", inputSchema: { parcel: z.string() } },
        async ({ parcel }) => {
          calls.push({ parcel, authorization: req.headers.authorization });
          return { content: [{ type: "text", text: `Parcel ${parcel} is in Lyon.` }] };
        },
      );
    }
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  return { url: `http://127.0.0.1:${port}`, calls, stop: close(server) };
}

/**
 * Remote agents that misbehave: `/notjson` serves an HTML page as its card, `/huge` a card
 * of 100 KiB, `/silent` a good card whose JSON-RPC endpoint never answers.
 */
export async function startBadAgents(port: number): Promise<Listening> {
  const url = `http://127.0.0.1:${port}`;
  const server = await listen(port, (req, res) => {
    if (req.url === "/notjson/card") {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html><body>This is not an agent card.</body></html>");
    } else if (req.url === "/huge/card") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ name: "huge", description: "x".repeat(100 * 1024) }));
    } else if (req.url === "/silent/card") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          name: "Silent",
          description: "Never answers",
          version: "1",
          supportedInterfaces: [{ url: `${url}/silent/rpc`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
          capabilities: { streaming: true },
          skills: [],
        }),
      );
    } else if (req.url === "/silent/rpc") {
      // Never answers: the connection stays open until Relay gives up (or the suite ends).
      req.resume();
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  return {
    url,
    stop: async () => {
      server.closeAllConnections();
      await close(server)();
    },
  };
}
