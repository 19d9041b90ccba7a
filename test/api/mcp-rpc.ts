import { exports } from "cloudflare:workers";
import { ALPHA_KEY } from "./helpers";
import { checkResponse } from "./openapi-conformance";

/**
 * JSON-RPC to `/mcp` over fetch, as an MCP client sends it in either revision (docs/mcp-server.md):
 * 2026-07-28 with its per-request `_meta` envelope and `MCP-Protocol-Version`/`Mcp-Method`
 * headers, or 2025-11-25 after `initialize`. SSE answers are read into their messages. Every
 * answer is checked against the OpenAPI document.
 */

export type Era = "modern" | "legacy";
export const MODERN = "2026-07-28";
export const LEGACY = "2025-11-25";

const CLIENT = { name: "relay-tests", version: "1.0.0" };

export interface RpcAnswer {
  status: number;
  contentType: string | null;
  /** The JSON-RPC messages of the answer, in order (one for a JSON answer; notifications first in a stream). */
  messages: any[];
  /** The last message: the response. */
  response: any;
  json: any;
}

let nextId = 1;

/** The `_meta` envelope a 2026-07-28 request carries. */
export const envelope = (extra: Record<string, unknown> = {}) => ({
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientInfo": CLIENT,
  "io.modelcontextprotocol/clientCapabilities": {},
  ...extra,
});

/** The headers naming a 2026-07-28 request's method (and its tool or resource). */
function modernHeaders(method: string, params: Record<string, any>): Record<string, string> {
  const headers: Record<string, string> = { "MCP-Protocol-Version": MODERN, "Mcp-Method": method };
  if (method === "tools/call") headers["Mcp-Name"] = params.name;
  if (method === "resources/read") headers["Mcp-Name"] = params.uri;
  return headers;
}

/** Posts a raw body (text or JSON) to /mcp. */
export async function post(
  body: unknown,
  { key = ALPHA_KEY, headers = {} }: { key?: string | null; headers?: Record<string, string> } = {},
): Promise<RpcAnswer> {
  const init: Record<string, string> = {
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    ...headers,
  };
  if (key) init.Authorization = `Bearer ${key}`;
  const response = await (exports as any).default.fetch(
    new Request("http://relay.test/mcp", {
      method: "POST",
      headers: init,
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
  );
  return read(response, "POST");
}

/** Any other method on /mcp. */
export async function other(method: string, key: string | null = ALPHA_KEY): Promise<RpcAnswer> {
  const response = await (exports as any).default.fetch(
    new Request("http://relay.test/mcp", { method, headers: key ? { Authorization: `Bearer ${key}` } : {} }),
  );
  return read(response, method);
}

async function read(response: Response, method: string): Promise<RpcAnswer> {
  const text = await response.text();
  const contentType = response.headers.get("Content-Type");
  let messages: any[] = [];
  let json: any = null;
  if (contentType?.startsWith("text/event-stream")) {
    messages = text
      .split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => JSON.parse(line.slice(5).trim()));
  } else if (text) {
    json = JSON.parse(text);
    messages = [json];
  }
  checkResponse(method, "http://relay.test/mcp", response.status, contentType, json);
  return { status: response.status, contentType, messages, response: messages.at(-1), json };
}

/** One request in the given revision; a legacy one after its own `initialize` (the fallback is stateless). */
export async function request(
  era: Era,
  method: string,
  params: Record<string, any> = {},
  { key = ALPHA_KEY, meta = {} }: { key?: string | null; meta?: Record<string, unknown> } = {},
): Promise<RpcAnswer> {
  const id = nextId++;
  if (era === "modern") {
    return post(
      { jsonrpc: "2.0", id, method, params: { ...params, _meta: envelope(meta) } },
      { key, headers: modernHeaders(method, params) },
    );
  }
  const withMeta = Object.keys(meta).length > 0 ? { ...params, _meta: meta } : params;
  return post({ jsonrpc: "2.0", id, method, params: withMeta }, { key, headers: { "MCP-Protocol-Version": LEGACY } });
}

/** The 2025-11-25 handshake: initialize, then the initialized notification. */
export async function initialize(key: string | null = ALPHA_KEY): Promise<RpcAnswer> {
  const answer = await post(
    {
      jsonrpc: "2.0",
      id: nextId++,
      method: "initialize",
      params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: CLIENT },
    },
    { key },
  );
  await post(
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { key, headers: { "MCP-Protocol-Version": LEGACY } },
  );
  return answer;
}

/** A tool call's result (the JSON-RPC `result`), in the given revision. */
export async function callTool(
  era: Era,
  name: string,
  args: Record<string, unknown>,
  meta: Record<string, unknown> = {},
) {
  const answer = await request(era, "tools/call", { name, arguments: args }, { meta });
  if (answer.response?.error) throw new Error(`tools/call ${name}: ${JSON.stringify(answer.response.error)}`);
  return { result: answer.response.result, answer };
}
