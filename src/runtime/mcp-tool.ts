/**
 * The MCP executor (docs/mcp.md): a registry tool of kind `mcp` is an MCP server reached over
 * Streamable HTTP with the official SDK's client (protocol revision 2025-11-25, the SDK's
 * latest; it negotiates down to 2025-06-18, 2025-03-26 and 2024-11-05). Each listing and
 * each call opens a session (initialize), does its one request and ends the session; every
 * HTTP request goes through the outbound policy with a capped body. Outcomes are values.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import type { ErrorCode } from "../errors/codes";
import { callOutput, type McpContent, type McpListedTool } from "../interop/mcp";
import { deadline } from "../lib/deadline";
import type { OutboundCall } from "../outbound/fetch";
import { secretRedactor } from "../outbound/redact";
import { outboundCause, sdkFetch } from "../outbound/sdk-fetch";
import { excerpt } from "../providers/failures";

/**
 * What a listing or call needs besides the server: the policy in force and the headers, their
 * values read from the tenant's vault (or why they could not be).
 */
export interface McpCallOptions extends Pick<OutboundCall, "policy" | "headers"> {
  now?: () => number;
}

/** What a server needs to be reached. */
export interface McpServer {
  name: string;
  url?: string | undefined;
  timeout_s: number;
  max_response_bytes: number;
}

/** Listing pages read at most: a server listing more is cut there. */
const MAX_LIST_PAGES = 10;
/** A listing's reply may be larger than one call's: tool schemas add up. */
const MIN_LIST_BYTES = 1024 * 1024;

const CLIENT_INFO = { name: "relay", version: "1.0.0" };

/** An SDK or transport failure as one line. */
function describe(error: unknown): string {
  const cause = outboundCause(error);
  if (cause)
    return cause.failure === "refused" ? `its url is not allowed (${cause.rule}): ${cause.message}` : cause.message;
  // An McpError's message reads "MCP error <code>: <message>".
  return excerpt(error instanceof Error ? error.message : String(error), 200);
}

/** Opens a session with the server, runs `work` in it, and ends the session whatever happens. */
async function withSession<T>(
  server: McpServer,
  options: McpCallOptions,
  maxBytes: number,
  signal: AbortSignal,
  work: (client: Client) => Promise<T>,
): Promise<T> {
  // Callers answer a failed header read before they open a session.
  const headers = options.headers.ok ? options.headers.values : {};
  const fetch = sdkFetch({ policy: options.policy, maxBodyBytes: maxBytes, headers });
  const transport = new StreamableHTTPClientTransport(new URL(server.url ?? ""), {
    fetch,
    requestInit: { redirect: "manual", signal },
  });
  const client = new Client(CLIENT_INFO, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  const timeout = server.timeout_s * 1000;
  try {
    await client.connect(transport, { signal, timeout });
    return await work(client);
  } finally {
    await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
  }
}

/** The server's tools (`tools/list`, every page up to MAX_LIST_PAGES), or why they could not be read. */
export async function listMcpTools(
  server: McpServer,
  options: McpCallOptions,
): Promise<{ ok: true; tools: McpListedTool[] } | { ok: false; code: ErrorCode; message: string }> {
  if (!options.headers.ok)
    return {
      ok: false,
      code: options.headers.code,
      message: `'${server.name}' could not list its tools: ${options.headers.message}`,
    };
  // Names and descriptions are shown to models and callers: never a header value they echo.
  const redact = secretRedactor(Object.values(options.headers.values));
  const { signal, clear } = deadline(server.timeout_s * 2000);
  try {
    const tools = await withSession(
      server,
      options,
      Math.max(MIN_LIST_BYTES, server.max_response_bytes),
      signal,
      async (client) => {
        const found: McpListedTool[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < MAX_LIST_PAGES; page++) {
          const listed = await client.listTools(cursor ? { cursor } : {}, { signal, timeout: server.timeout_s * 1000 });
          for (const tool of listed.tools)
            found.push({
              name: tool.name,
              description: tool.description === undefined ? undefined : redact(tool.description),
              inputSchema: tool.inputSchema,
            });
          cursor = listed.nextCursor;
          if (!cursor) break;
        }
        return found;
      },
    );
    return { ok: true, tools };
  } catch (error) {
    return {
      ok: false,
      code: "MCP_ERROR",
      message: redact(`'${server.name}' could not list its tools: ${describe(error)}`),
    };
  } finally {
    clear();
  }
}

/**
 * Where a `tools/call` carries its idempotency id in `_meta` (a reverse-DNS prefix the MCP
 * specification leaves to implementations): the same for every attempt at one call, so a
 * server that keeps it can drop a repeat (docs/mcp.md, Calls and restarts).
 */
export const IDEMPOTENCY_META_KEY = "dev.relay/idempotency-key";

/**
 * One `tools/call`: what the model sees, and whether it went well. `idempotencyKey` names the
 * call (the same on every attempt at it) and goes to the server in `_meta`.
 */
export async function callMcpTool(
  server: McpServer,
  tool: { function_name: string; name: string },
  args: Record<string, unknown>,
  idempotencyKey: string,
  options: McpCallOptions,
): Promise<{ ok: boolean; output: string; duration_ms: number }> {
  const now = options.now ?? Date.now;
  const started = now();
  // What the server says goes to the model and the run's history: never a header value it echoes.
  const redact = secretRedactor(options.headers.ok ? Object.values(options.headers.values) : []);
  const done = (ok: boolean, output: string) => ({
    ok,
    output: redact(output),
    duration_ms: Math.max(0, now() - started),
  });
  if (!options.headers.ok)
    return done(
      false,
      `Error: '${tool.function_name}' could not be called (${options.headers.code}): ${options.headers.message}.`,
    );
  const { signal, clear } = deadline(server.timeout_s * 2000);
  try {
    const result = await withSession(server, options, server.max_response_bytes, signal, (client) =>
      client.callTool(
        { name: tool.name, arguments: args, _meta: { [IDEMPOTENCY_META_KEY]: idempotencyKey } },
        undefined,
        { signal, timeout: server.timeout_s * 1000 },
      ),
    );
    const { ok, output } = callOutput(tool.function_name, {
      content: (result.content ?? []) as McpContent[],
      structuredContent: result.structuredContent,
      isError: result.isError === true,
    });
    if (output.length > server.max_response_bytes)
      return done(
        false,
        `Error: the reply of '${tool.function_name}' is larger than ${server.max_response_bytes} bytes.`,
      );
    return done(ok, output);
  } catch (error) {
    if (signal.aborted)
      return done(false, `Error: '${tool.function_name}' did not answer within ${server.timeout_s} s.`);
    return done(false, `Error: '${tool.function_name}' failed: ${describe(error)}`);
  } finally {
    clear();
  }
}
