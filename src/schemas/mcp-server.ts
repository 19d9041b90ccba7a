import * as z from "zod";
import { AgentName } from "./agent";

/**
 * Relay as an MCP server (docs/mcp-server.md): the tenant's `mcp` settings and the wire shapes
 * the OpenAPI document names for `/mcp`. The protocol's own objects are the official SDK's
 * (`@modelcontextprotocol/server`); these only say enough for the document.
 */

/** The most agent names `mcp.expose` lists (a tenant's registry may hold more; expose few). */
export const MAX_EXPOSED_AGENTS = 1000;

/**
 * `PUT /v1/config/mcp`: which agents an MCP client is offered. `expose` lists agent names (an
 * agent registered later under a listed name is exposed from then on); absent: every agent.
 */
export const McpConfigInput = z.strictObject({
  expose: z
    .array(AgentName)
    .max(MAX_EXPOSED_AGENTS)
    .transform((names) => [...new Set(names)].sort())
    .optional(),
});
export type McpConfigInput = z.infer<typeof McpConfigInput>;

/** `GET|PUT|DELETE /v1/config/mcp`: the stored settings; `expose` null means every agent. */
export const McpConfigView = z.strictObject({
  expose: z.array(AgentName).nullable(),
  /** When the tenant last set them (null: never, the defaults apply). */
  updated_at: z.string().nullable(),
});
export type McpConfigView = z.infer<typeof McpConfigView>;

/** A JSON-RPC 2.0 message to `/mcp`: a request, a notification, or a response to the server. */
export const McpJsonRpcMessage = z.looseObject({
  jsonrpc: z.literal("2.0"),
  method: z
    .string()
    .optional()
    .describe(
      "An MCP method: server/discover (2026-07-28) or initialize (2025-11-25), tools/list, tools/call, resources/list, resources/templates/list, resources/read, ping, notifications/….",
    ),
  id: z.union([z.string(), z.number()]).optional(),
  params: z.unknown().optional(),
});

/** A JSON-RPC 2.0 answer from `/mcp`: `result`, or `error` with JSON-RPC's and MCP's codes. */
export const McpJsonRpcAnswer = z.looseObject({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string(), z.number(), z.null()]),
  result: z.unknown().optional(),
  error: z.looseObject({ code: z.number().int(), message: z.string() }).optional(),
});
