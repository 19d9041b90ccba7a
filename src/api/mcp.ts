import { createMcpHandler } from "@modelcontextprotocol/server";
import { type Context, Hono } from "hono";
import type { AppEnv } from "../app-env";
import { apiKeyAuth, backgroundOf } from "../auth/middleware";
import { getMcpConfig } from "../registry/mcp-config-store";
import { incomingTrace } from "../telemetry/propagation";
import type { McpContext } from "./mcp-server/context";
import { exposureOf } from "./mcp-server/expose";
import { relayMcpServer } from "./mcp-server/server";

/**
 * `/mcp`: Relay as an MCP server over Streamable HTTP (docs/mcp-server.md), for the tenant the
 * key names — the same key and request limit as `/v1`, checked before the SDK sees anything.
 * The official SDK's handler answers the protocol: revision 2026-07-28 (stateless,
 * `server/discover`) and, through its stateless fallback, the 2025-11-25 handshake. GET and
 * DELETE (a 2025 session's stream and end) are 405: there are no MCP sessions to open or end.
 */

/** The largest JSON-RPC body `/mcp` reads (a message is at most 32 KiB of text; room for the rest). */
export const MCP_BODY_LIMIT = 256 * 1024;

/** The SDK's handler for one request, its servers built for `ctx`. */
function handlerFor(ctx: McpContext | null) {
  return createMcpHandler(
    () => {
      // GET and DELETE never reach a server: the stateless handler answers them itself.
      if (ctx === null) throw new Error("no MCP server for a request without a body");
      return relayMcpServer(ctx);
    },
    { maxRequestBodySize: MCP_BODY_LIMIT },
  );
}

async function serve(c: Context<AppEnv>): Promise<Response> {
  const tenant = c.get("tenant");
  const { expose } = await getMcpConfig(c.env.DB, tenant);
  const ctx: McpContext = {
    env: c.env,
    tenant,
    exposure: exposureOf(expose),
    background: backgroundOf(c),
    ...incomingTrace(c.req.raw.headers),
  };
  return handlerFor(ctx).fetch(c.req.raw);
}

export const mcp = new Hono<AppEnv>()
  .use(apiKeyAuth())
  .post("/", serve)
  .on(["GET", "DELETE"], "/", (c) => handlerFor(null).fetch(c.req.raw));
