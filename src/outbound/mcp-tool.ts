/**
 * The MCP executor (docs/mcp.md): a registry tool of kind `mcp` is an MCP server reached over
 * Streamable HTTP with the official SDK's client. It speaks revision 2026-07-28 (stateless:
 * `server/discover`, no session) to a server that offers it and 2025-11-25 (`initialize`,
 * negotiating down to 2024-11-05) to one that does not: the client probes, and the verdict
 * is kept per isolate (./mcp-era.ts) so the next connection skips the probe. Each listing
 * and each call opens a connection, does its one request and closes it; every HTTP request
 * goes through the outbound policy with a capped body. Outcomes are values.
 */

import {
  Client,
  type PriorDiscovery,
  ProtocolError,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/client/validators/cf-worker";
import type { ErrorCode } from "../errors/codes";
import { callOutput, type McpContent, type McpListedTool } from "../interop/mcp";
import { deadline } from "../lib/deadline";
import { excerpt } from "../providers/failures";
import { traceHeaders } from "../telemetry/propagation";
import type { OutboundCall } from "./fetch";
import { eraKey, forgetEra, priorEra, rememberEra } from "./mcp-era";
import { secretRedactor } from "./redact";
import { outboundCause, sdkFetch } from "./sdk-fetch";

/**
 * What a listing or call needs besides the server: the policy in force and the headers, their
 * values read from the tenant's vault (or why they could not be).
 */
export interface McpCallOptions extends Pick<OutboundCall, "tenant" | "policy" | "headers" | "trace"> {
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
  // A JSON-RPC error reads "MCP error <code>: <message>", as the 1.x SDK wrote it.
  if (ProtocolError.isInstance(error)) return excerpt(`MCP error ${error.code}: ${error.message}`, 200);
  return excerpt(error instanceof Error ? error.message : String(error), 200);
}

/** What a connected client found out about the server's era, as a verdict to connect with later. */
function eraOf(client: Client): PriorDiscovery | undefined {
  const discover = client.getDiscoverResult();
  if (client.getProtocolEra() === "modern" && discover) return { kind: "modern", discover };
  if (client.getProtocolEra() === "legacy") return { kind: "legacy" };
  return undefined;
}

/**
 * A 2025-11-25 session opens a standalone GET stream once it is initialized, for what the
 * server sends unasked (its own requests, list changes). A Relay connection lives for one
 * listing or one call and answers nothing unasked, so that stream would only hold a
 * connection (a subrequest) open until the session ends: it is answered here as a server
 * without one answers (405, which the client takes as "none") and never sent. A GET that
 * resumes a call's own stream (`Last-Event-ID`) goes out as usual.
 */
function withoutStandaloneStream(fetch: typeof globalThis.fetch): typeof globalThis.fetch {
  return (input, init) =>
    init?.method === "GET" && !new Headers(init.headers).has("last-event-id")
      ? Promise.resolve(new Response(null, { status: 405 }))
      : fetch(input, init);
}

/**
 * Connects to the server (the era kept for it, or a probe), runs `work`, and closes the
 * connection whatever happens: on 2025-11-25 that ends the session (`DELETE`, when the
 * server opened one); on 2026-07-28 there is none.
 */
async function withConnection<T>(
  server: McpServer,
  options: McpCallOptions,
  maxBytes: number,
  signal: AbortSignal,
  work: (client: Client) => Promise<T>,
): Promise<T> {
  // Callers answer a failed header read before they connect.
  const headers = options.headers.ok ? options.headers.values : {};
  const url = server.url ?? "";
  const fetch = withoutStandaloneStream(
    sdkFetch({
      policy: options.policy,
      maxBodyBytes: maxBytes,
      headers,
      ...(options.trace ? { trace: options.trace } : {}),
    }),
  );
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch,
    // Redirects are never followed: the outbound policy judged this address, not the next.
    requestInit: { redirect: "manual", signal },
  });
  const client = new Client(CLIENT_INFO, {
    // Named, not left to the SDK: its default follows the export conditions a bundler sets, and is
    // ajv under `node` or none of them; Workers refuse ajv's code generation (lint keeps it out).
    jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
    versionNegotiation: { mode: "auto" },
    // A server that does not declare tools is refused here, as its tools/list would be.
    enforceStrictCapabilities: true,
    // A call has no user to ask mid-way: a 2026-07-28 `input_required` result is an error.
    inputRequired: { autoFulfill: false },
  });
  const timeout = server.timeout_s * 1000;
  const key = await eraKey(options.tenant, url, headers);
  try {
    await client.connect(transport, { signal, timeout, prior: priorEra(key, Date.now()) });
    const result = await work(client);
    rememberEra(key, eraOf(client), Date.now());
    return result;
  } catch (error) {
    forgetEra(key);
    throw error;
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
    const tools = await withConnection(
      server,
      options,
      Math.max(MIN_LIST_BYTES, server.max_response_bytes),
      signal,
      async (client) => {
        const found: McpListedTool[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < MAX_LIST_PAGES; page++) {
          // Page by page (not the SDK's walk, which fails past its cap): a longer listing is cut here.
          const listed = await client.request(
            { method: "tools/list", params: cursor ? { cursor } : {} },
            { signal, timeout: server.timeout_s * 1000 },
          );
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
    const result = await withConnection(server, options, server.max_response_bytes, signal, (client) =>
      client.callTool(
        {
          name: tool.name,
          arguments: args,
          // The run's trace in `_meta` too (SEP-414's keys): a server may read it there rather than in the headers.
          _meta: { [IDEMPOTENCY_META_KEY]: idempotencyKey, ...(options.trace ? traceHeaders(options.trace) : {}) },
        },
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
