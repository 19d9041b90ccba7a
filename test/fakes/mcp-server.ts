import { Server as ServerV1 } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { createMcpHandler, inputRequired, Server as ServerV2 } from "@modelcontextprotocol/server";
import { type HttpHandler, http } from "msw";

/**
 * An MCP tool server for msw, built with an official SDK so what Relay talks to is the real
 * protocol (docs/mcp.md, Revisions):
 *
 * - `2026-07-28` (the default): `@modelcontextprotocol/server`'s `createMcpHandler`, which
 *   answers `server/discover` and serves each request statelessly (it still serves a 2025
 *   client by its stateless fallback, as a deployed modern server does);
 * - `2025-11-25`: the 1.x `@modelcontextprotocol/sdk` server over its Web-standard Streamable
 *   HTTP transport, with sessions (`Mcp-Session-Id`), which knows no revision after 2025-11-25.
 *
 * Both serve `lookup_order` and `echo`, record every request and call, and can answer
 * `tools/list` or `tools/call` with a JSON-RPC error (thrown in the SDK's own handler).
 */
export type McpRevision = "2026-07-28" | "2025-11-25";

export interface FakeMcp {
  handler: HttpHandler;
  /** Every tools/call the server ran, with the request's headers and its `_meta`. */
  calls: {
    tool: string;
    arguments: Record<string, unknown>;
    headers: Record<string, string>;
    meta: Record<string, unknown> | undefined;
  }[];
  /** JSON-RPC methods of the POSTed requests and notifications, in order. */
  methods: string[];
  /** Every HTTP request the server got: its method, the JSON-RPC method (POSTs) and its headers. */
  requests: { http: string; method: string | undefined; headers: Record<string, string> }[];
}

export interface FakeMcpOptions {
  revision?: McpRevision;
  failList?: boolean;
  failCall?: boolean;
  /** A tools/call answers after this long (its work done at once). */
  callDelayMs?: number;
  /**
   * 2026-07-28: `lookup_order` answers `input_required`, asking the user to confirm
   * (`elicit`) or with server state alone to send back (`state`).
   */
  inputRequired?: "elicit" | "state";
  /** 2025-11-25: answer each POST as a Server-Sent Events stream rather than as JSON. */
  sse?: boolean;
}

interface FakeTool {
  name: string;
  description: string;
  inputSchema: { type: "object"; properties: Record<string, { type: string }>; required: string[] };
}

const TOOLS: FakeTool[] = [
  {
    name: "lookup_order",
    description: "Looks an order up by id",
    inputSchema: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] },
  },
  {
    name: "echo",
    description: "Echoes",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  },
];

const CONFIRM = { type: "object" as const, properties: { confirm: { type: "boolean" as const } } };

/** A JSON-RPC error both SDKs send as it is (the 1.x McpError would prefix its message). */
const rpcError = (code: number, message: string) => Object.assign(new Error(message), { code });

type CallParams = { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> };
type Reply = { content: { type: "text"; text: string }[] };
type Headers = Record<string, string>;
type Handlers = {
  list: () => Promise<{ tools: FakeTool[] }>;
  run: (params: CallParams, headers: Headers) => Promise<Reply>;
};

export function fakeMcpServer(url: string, options: FakeMcpOptions = {}): FakeMcp {
  const calls: FakeMcp["calls"] = [];
  const methods: string[] = [];
  const requests: FakeMcp["requests"] = [];
  const handlers: Handlers = {
    list: async () => {
      if (options.failList) throw rpcError(-32603, "the tool index is down");
      return { tools: TOOLS };
    },
    run: async (params, headers) => {
      if (options.failCall) throw rpcError(-32000, "the order system is down");
      const args = params.arguments ?? {};
      calls.push({ tool: params.name, arguments: args, headers, meta: params._meta });
      if (params.name === "lookup_order") {
        if (options.callDelayMs) await new Promise((resolve) => setTimeout(resolve, options.callDelayMs));
        return { content: [{ type: "text", text: `order ${String(args.order_id)}: shipped` }] };
      }
      return { content: [{ type: "text", text: String(args.text) }] };
    },
  };
  const serve =
    options.revision === "2025-11-25"
      ? legacyServer(handlers, options.sse ?? false)
      : modernServer(handlers, options.inputRequired);
  const handler = http.all(url, async ({ request }) => {
    let method: string | undefined;
    if (request.method === "POST") {
      method = ((await request.clone().json()) as { method?: string }).method;
      if (method) methods.push(method);
    }
    requests.push({ http: request.method, method, headers: Object.fromEntries(request.headers) });
    return serve(request as unknown as Request);
  });
  return { handler, calls, methods, requests };
}

/** `@modelcontextprotocol/server` 2.x: `createMcpHandler`, a server instance per request. */
function modernServer({ list, run }: Handlers, ask?: "elicit" | "state"): (request: Request) => Promise<Response> {
  const mcp = createMcpHandler(({ requestInfo }) => {
    const headers = Object.fromEntries(requestInfo?.headers ?? []);
    const server = new ServerV2({ name: "fake-tools", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler("tools/list", list);
    server.setRequestHandler("tools/call", (request) => {
      if (!ask || request.params.name !== "lookup_order") return run(request.params as CallParams, headers);
      if (ask === "state") return inputRequired({ requestState: "awaiting-confirmation" });
      return inputRequired({
        inputRequests: { confirm: inputRequired.elicit({ message: "Sure?", requestedSchema: CONFIRM }) },
      });
    });
    return server;
  });
  return (request) => mcp.fetch(request);
}

/** The 1.x `@modelcontextprotocol/sdk` server with sessions: a transport per `Mcp-Session-Id`. */
function legacyServer({ list, run }: Handlers, sse: boolean): (request: Request) => Promise<Response> {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  return async (request) => {
    const known = sessions.get(request.headers.get("mcp-session-id") ?? "");
    if (known) return known.handleRequest(request);
    const server = new ServerV1({ name: "fake-tools", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, list);
    server.setRequestHandler(CallToolRequestSchema, (req, extra) =>
      run(req.params as CallParams, (extra.requestInfo?.headers ?? {}) as Headers),
    );
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      enableJsonResponse: !sse,
      onsessioninitialized: (id) => void sessions.set(id, transport),
      onsessionclosed: (id) => void sessions.delete(id),
    });
    await server.connect(transport);
    return transport.handleRequest(request);
  };
}
