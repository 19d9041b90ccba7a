import { McpConfigInput, McpConfigView, McpJsonRpcAnswer, McpJsonRpcMessage } from "../../schemas/mcp-server";
import type { Answer, Operation } from "./operation";

/**
 * Relay as an MCP server (docs/mcp-server.md): the `/mcp` endpoint, whose protocol the official
 * SDK answers (JSON-RPC bodies, its own HTTP statuses for protocol errors), and the tenant's
 * `mcp` settings. `body` is the table's shared list of body errors.
 */
export function mcpOperations(body: Operation["errors"]): Operation[] {
  const rpc = (description: string): Answer => ({ description, schema: McpJsonRpcAnswer });
  const endpoint = "Relay's MCP server over Streamable HTTP (docs/mcp-server.md).";
  return [
    {
      method: "post",
      path: "/mcp",
      tag: "mcp",
      summary: "MCP: one JSON-RPC message (tools, resources, server/discover, initialize)",
      description: `${endpoint} Speaks revision 2026-07-28 (stateless: \`server/discover\`, the per-request \`_meta\` envelope, \`MCP-Protocol-Version\` and \`Mcp-Method\` headers) and 2025-11-25 (\`initialize\`, served statelessly). Send \`Accept: application/json, text/event-stream\`. Tool failures are tool results with \`isError\` and Relay's error code; protocol errors are JSON-RPC errors.`,
      body: McpJsonRpcMessage,
      answers: {
        200: {
          ...rpc("The JSON-RPC answer."),
          stream:
            "When the call sends notifications first (progress of send_message): each JSON-RPC message as an SSE `message` event, the answer last.",
        },
        202: { description: "A notification or a response, accepted; no body." },
        400: rpc(
          "A protocol error (malformed JSON-RPC, headers that disagree with the body, an unsupported revision).",
        ),
        406: rpc("The client does not accept application/json and text/event-stream."),
        413: rpc("The body is over 256 KiB."),
        415: rpc("The body is not application/json."),
      },
      errors: [],
    },
    ...(["get", "delete"] as const).map(
      (method): Operation => ({
        method,
        path: "/mcp",
        tag: "mcp",
        summary:
          method === "get" ? "MCP: no server-initiated stream (stateless)" : "MCP: no session to end (stateless)",
        description: `${endpoint} Stateless: there is no MCP session to stream to or to end, so the answer is always 405.`,
        answers: { 405: rpc("Method not allowed.") },
        errors: [],
      }),
    ),
    {
      method: "get",
      path: "/v1/config/mcp",
      tag: "mcp",
      summary: "What the MCP server offers: the exposed agents",
      answers: { 200: { description: "The settings (`expose` null: every agent).", schema: McpConfigView } },
      errors: [],
    },
    {
      method: "put",
      path: "/v1/config/mcp",
      tag: "mcp",
      summary: "Set which agents MCP clients are offered",
      description:
        "`expose` lists agent names (absent: every agent). Unexposed agents are not listed, not routed to, and not started or messaged through /mcp. Read on every /mcp request.",
      body: McpConfigInput,
      answers: { 200: { description: "The settings as stored.", schema: McpConfigView } },
      errors: body,
    },
    {
      method: "delete",
      path: "/v1/config/mcp",
      tag: "mcp",
      summary: "Back to the defaults: every agent exposed",
      answers: { 200: { description: "The defaults.", schema: McpConfigView } },
      errors: [],
    },
  ];
}
