import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { McpServer as LegacyMcpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";

/**
 * The other servers of the interop suite: MCP tool servers built with the official SDKs, one
 * per revision (docs/mcp.md, Revisions), one with no tools at all (which declares no tools
 * capability, so Relay refuses to list it), and the bad remote agents.
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

async function readBody(req: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of req) text += chunk;
  return text;
}

/** One call of `track_parcel`: which server ran it, and the Authorization header it came with. */
export interface ParcelCall {
  parcel: string;
  authorization: string | undefined;
  revision: "2026-07-28" | "2025-11-25";
}

/** One HTTP request an MCP server got: its path, its JSON-RPC method (POSTs) and its headers. */
export interface McpRequest {
  path: string;
  http: string;
  method: string | undefined;
  headers: IncomingMessage["headers"];
}

const TRACK = { description: "Where a parcel is now", inputSchema: z.object({ parcel: z.string() }) };
const answer = (parcel: string) => ({ content: [{ type: "text" as const, text: `Parcel ${parcel} is in Lyon.` }] });

/**
 * `/mcp`: a parcel tracker with one tool, `track_parcel`, served by `@modelcontextprotocol/server`
 * (`createMcpHandler`: 2026-07-28, and 2025-11-25 statelessly for older clients);
 * `/legacy/mcp`: the same tracker served by the 1.x `@modelcontextprotocol/sdk`, which knows
 * 2025-11-25 at most; `/empty`: a 1.x server with no tools. Calls and requests are recorded.
 */
export async function startMcpServers(
  port: number,
): Promise<Listening & { calls: ParcelCall[]; requests: McpRequest[] }> {
  const calls: ParcelCall[] = [];
  const requests: McpRequest[] = [];
  const modern = createMcpHandler(({ requestInfo }) => {
    const mcp = new McpServer({ name: "parcels", version: "2.0.0" });
    mcp.registerTool("track_parcel", TRACK, async ({ parcel }) => {
      calls.push({
        parcel,
        authorization: requestInfo?.headers.get("authorization") ?? undefined,
        revision: "2026-07-28",
      });
      return answer(parcel);
    });
    return mcp;
  });
  const server = await listen(port, async (req, res) => {
    const text = req.method === "POST" ? await readBody(req) : "";
    const body = text ? (JSON.parse(text) as { method?: string }) : undefined;
    requests.push({ path: req.url ?? "", http: req.method ?? "", method: body?.method, headers: req.headers });
    if (req.url === "/mcp") return void (await sendWeb(res, await modern.fetch(webRequest(req, port, text))));
    const mcp = new LegacyMcpServer({ name: "parcels", version: "1.0.0" });
    if (req.url === "/legacy/mcp") {
      mcp.registerTool(
        "track_parcel",
        { description: TRACK.description, inputSchema: { parcel: z.string() } },
        async ({ parcel }) => {
          calls.push({ parcel, authorization: req.headers.authorization, revision: "2025-11-25" });
          return answer(parcel);
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
  return { url: `http://127.0.0.1:${port}`, calls, requests, stop: close(server) };
}

/** The Node request as a web-standard one (its body already read). */
function webRequest(req: IncomingMessage, port: number, body: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers))
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  return new Request(`http://127.0.0.1:${port}${req.url}`, {
    method: req.method,
    headers,
    body: req.method === "POST" ? body : undefined,
  });
}

/** Writes a web-standard response to Node's, streaming its body (an SSE reply included). */
async function sendWeb(res: ServerResponse, response: Response): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body) for await (const chunk of response.body) res.write(chunk);
  res.end();
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
