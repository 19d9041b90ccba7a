import type { CallToolResult } from "@modelcontextprotocol/server";
import { type ErrorBody, isRelayError } from "../../errors";

/**
 * Tool answers (docs/mcp-server.md, Errors): a value is `structuredContent` with its JSON as
 * text; a failure is a tool result with `isError` and Relay's stable error code, never a
 * protocol error and never an HTTP 500.
 */

/** A tool's value: structured, and the same JSON as text for clients that read text only. */
export function toolValue(value: Record<string, unknown>, isError = false): CallToolResult {
  return {
    content: [{ type: "text", text: JSON.stringify(value) }],
    structuredContent: value,
    ...(isError ? { isError: true } : {}),
  };
}

/** A Relay error as a tool error: `{ error: { code, message, details? } }`, the text led by the code. */
export function toolError(body: ErrorBody): CallToolResult {
  const error = body.details === undefined ? { code: body.code, message: body.message } : body;
  return {
    content: [{ type: "text", text: `${body.code}: ${body.message}` }],
    structuredContent: { error },
    isError: true,
  };
}

/** What a thrown value says as a Relay error body: a RelayError's own, anything else INTERNAL (logged). */
export function errorBodyOf(error: unknown): ErrorBody {
  // A RelayError thrown across RPC keeps its name, code and details, not its class.
  if (isRelayError(error))
    return error.details === undefined
      ? { code: error.code, message: error.message }
      : { code: error.code, message: error.message, details: error.details };
  console.error("mcp tool failed", error);
  return { code: "INTERNAL", message: "Internal error." };
}

/** Runs a tool's work; whatever it throws comes back as a tool error. */
export async function guarded(work: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await work();
  } catch (error) {
    return toolError(errorBodyOf(error));
  }
}
