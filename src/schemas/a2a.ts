import * as z from "zod";

/**
 * The A2A 1.0 wire shapes Relay's OpenAPI document names (docs/a2a.md). The protocol's own
 * objects are the official SDK's (`@a2a-js/sdk`); these only say enough for the document.
 */

/** An agent card (A2A 1.0, section 4.4.1): the fields every card of Relay's has, others allowed. */
export const A2aAgentCard = z.looseObject({
  name: z.string(),
  description: z.string(),
  version: z.string(),
  supportedInterfaces: z.array(
    z.looseObject({ url: z.string(), protocolBinding: z.string(), protocolVersion: z.string() }),
  ),
  capabilities: z.looseObject({}),
});

/** A JSON-RPC 2.0 request: SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask, SubscribeToTask, GetExtendedAgentCard. */
export const JsonRpcRequest = z.looseObject({
  jsonrpc: z.literal("2.0"),
  method: z
    .string()
    .describe(
      "An A2A method: SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask, SubscribeToTask, GetExtendedAgentCard.",
    ),
  id: z.union([z.string(), z.number(), z.null()]).optional(),
  params: z.unknown().optional(),
});

/** A JSON-RPC 2.0 answer: `result`, or `error` with A2A's codes (-32001 task not found, …). */
export const JsonRpcResponse = z.looseObject({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string(), z.number(), z.null()]),
  result: z.unknown().optional(),
  error: z.looseObject({ code: z.number().int(), message: z.string() }).optional(),
});
