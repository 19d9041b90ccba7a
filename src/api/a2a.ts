import { AgentCard } from "@a2a-js/sdk";
import { A2A_ERROR_CODE, toJsonRpcError } from "@a2a-js/sdk/errors";
import { JsonRpcTransportHandler, ServerCallContext, validateVersion } from "@a2a-js/sdk/server";
import { type Context, Hono } from "hono";
import type { AppEnv } from "../app-env";
import { keyEntries, tenantForKey } from "../auth/api-keys";
import { apiKeyAuth } from "../auth/middleware";
import { RelayError } from "../errors";
import { agentCard, frontDoorCard, publicCard } from "../interop/a2a-card";
import { paramsError } from "../interop/a2a-params";
import { AgentName } from "../schemas/agent";
import { agentDirectory } from "../services/registry-cache";
import { A2A_QUOTA_EXCEEDED, type A2aTarget, type QuotaExceededError, RelayA2aHandler } from "./a2a-handler";
import { retryAfterOf } from "./error-handler";
import { parseWith, readText } from "./validate";

/**
 * A2A 1.0 over JSON-RPC (docs/a2a.md): every agent of a tenant at `/a2a/<agent>` and the
 * tenant's front door at `/a2a`, each with its card at `.well-known/agent-card.json`. The
 * tenant is the API key's. A card read without a key is the same for every address and
 * tells only how to authenticate; with the key it is the agent's own.
 */

type Ctx = Context<AppEnv>;

/** The largest JSON-RPC request read. */
const A2A_BODY_LIMIT = 1024 * 1024;
const SSE_HEADERS = {
  "Content-Type": "text/event-stream; charset=utf-8",
  "Cache-Control": "no-cache",
  "X-Accel-Buffering": "no",
};

/** The endpoint URL a card advertises: this deployment's origin, then /a2a[/<agent>]. */
function endpointOf(c: Ctx, agent: string | null): string {
  return `${new URL(c.req.url).origin}/a2a${agent ? `/${agent}` : ""}`;
}

/** The tenant of the request's key, null without one; a wrong key is 401 as everywhere. */
async function optionalTenant(c: Ctx): Promise<string | null> {
  const header = c.req.header("Authorization");
  if (header === undefined) return null;
  const key = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
  const tenant = key ? await tenantForKey(await keyEntries(c.env.RELAY_API_KEYS), key) : null;
  if (!tenant) throw new RelayError("UNAUTHORIZED", "Invalid API key.");
  return tenant;
}

/** The target of `/a2a/<agent>` (an enabled agent of the tenant) or of `/a2a`, and its card. */
async function targetOf(c: Ctx, name: string | null): Promise<{ target: A2aTarget; card: AgentCard }> {
  const directory = await agentDirectory(c.env.DB, c.get("tenant"));
  if (name === null)
    return { target: { kind: "front" }, card: frontDoorCard(directory.agents, endpointOf(c, null), directory.version) };
  const agent = directory.byName.get(parseWith(AgentName, name, "agent name"));
  if (!agent) throw new RelayError("AGENT_NOT_FOUND", `No agent named '${name}'.`, { agent: name });
  if (!agent.enabled)
    throw new RelayError("AGENT_UNAVAILABLE", `Agent '${name}' is disabled.`, { agent: name, reason: "disabled" });
  return { target: { kind: "agent", agent }, card: agentCard(agent, endpointOf(c, name), directory.version) };
}

async function card(c: Ctx, name: string | null): Promise<Response> {
  const tenant = await optionalTenant(c);
  if (tenant === null)
    return c.json(AgentCard.toJSON(publicCard(endpointOf(c, name))), 200, {
      "Cache-Control": "public, max-age=300",
      Vary: "Authorization",
    });
  c.set("tenant", tenant);
  const { card } = await targetOf(c, name);
  return c.json(AgentCard.toJSON(card), 200, { "Cache-Control": "private, max-age=60", Vary: "Authorization" });
}

const jsonRpcError = (id: unknown, error: unknown) => ({
  jsonrpc: "2.0",
  id: id ?? null,
  error: toJsonRpcError(error),
});

/** A2A 1.0.1's own media type: answered with when the client accepts it, else `application/json`. */
export const A2A_MEDIA_TYPE = "application/a2a+json";

/** A JSON answer in the media type the client asked for (`Accept: application/a2a+json`, or plain JSON). */
function rpcJson(c: Ctx, body: unknown, headers: Record<string, string> = {}): Response {
  const a2a = (c.req.header("Accept") ?? "").toLowerCase().includes(A2A_MEDIA_TYPE);
  return c.json(body, 200, a2a ? { ...headers, "Content-Type": A2A_MEDIA_TYPE } : headers);
}

/**
 * A JSON-RPC answer as JSON. A quota refusal's error (docs/a2a.md, Errors) gets its `data` — the
 * transport writes only the code and message — and the answer gets `Retry-After`, as the HTTP
 * API's 429 does.
 */
function answerJson(c: Ctx, answer: unknown, refusal: QuotaExceededError | null): Response {
  const error = (answer as { error?: { code?: unknown; data?: unknown } }).error;
  if (!refusal || error?.code !== A2A_QUOTA_EXCEEDED) return rpcJson(c, answer);
  error.data = refusal.data();
  const retryAfter = retryAfterOf(refusal.body);
  return rpcJson(c, answer, retryAfter ? { "Retry-After": retryAfter } : {});
}

/** The id of a JSON-RPC request text, for errors answered before the handler runs. */
function requestId(text: string): unknown {
  try {
    const id = (JSON.parse(text) as { id?: unknown }).id;
    return typeof id === "string" || typeof id === "number" ? id : null;
  } catch {
    return null;
  }
}

/**
 * What JSON-RPC 2.0 refuses before a method is looked at (docs/a2a.md, Errors): a body that is
 * not JSON is a parse error (-32700); a batch, or an object that is not a request — `jsonrpc`
 * other than "2.0", no method, an id that is not a string, number or null — is an invalid request
 * (-32600). The SDK's transport would answer both as invalid params. Params the SDK would take
 * but the spec refuses are invalid params (-32602: src/interop/a2a-params.ts).
 */
export function envelopeError(text: string): { id: string | number | null; code: number; message: string } | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { id: null, code: A2A_ERROR_CODE.PARSE_ERROR, message: "Parse error: the body is not JSON." };
  }
  const invalid = (id: string | number | null, why: string) => ({
    id,
    code: A2A_ERROR_CODE.INVALID_REQUEST,
    message: `Invalid Request: ${why}.`,
  });
  if (Array.isArray(body)) return invalid(null, "batches are not supported");
  if (body === null || typeof body !== "object") return invalid(null, "the body is not a JSON-RPC request object");
  const { jsonrpc, method, id } = body as Record<string, unknown>;
  const idOk =
    id === undefined || id === null || typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
  const replyTo = idOk && id !== undefined ? (id as string | number | null) : null;
  if (jsonrpc !== "2.0") return invalid(replyTo, '"jsonrpc" must be "2.0"');
  if (typeof method !== "string" || method === "") return invalid(replyTo, '"method" must be a non-empty string');
  if (!idOk) return invalid(null, '"id" must be a string, a number or null');
  const bad = paramsError(method, (body as Record<string, unknown>).params);
  return bad ? { id: replyTo, code: A2A_ERROR_CODE.INVALID_PARAMS, message: `Invalid params: ${bad}` } : null;
}

async function rpc(c: Ctx, name: string | null): Promise<Response> {
  const { target, card } = await targetOf(c, name);
  const text = await readText(c, A2A_BODY_LIMIT);
  const refused = envelopeError(text);
  if (refused)
    return rpcJson(c, { jsonrpc: "2.0", id: refused.id, error: { code: refused.code, message: refused.message } });
  // A2A-Version (header, or query parameter); none means 0.3, which Relay does not speak.
  const version = c.req.header("A2A-Version") ?? c.req.query("A2A-Version") ?? "";
  try {
    validateVersion(version || "0.3", card, "JSONRPC");
  } catch (error) {
    return rpcJson(c, jsonRpcError(requestId(text), error));
  }
  const extensions = (c.req.header("A2A-Extensions") ?? "")
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "");
  const context = new ServerCallContext({ requestedVersion: version, requestedExtensions: extensions });
  const handler = new RelayA2aHandler(c, target, card);
  const answer = await new JsonRpcTransportHandler(handler).handle(text, context);
  if (!(Symbol.asyncIterator in (answer as object))) return answerJson(c, answer, handler.refusal);
  const events = (answer as AsyncGenerator<{ id: unknown }>)[Symbol.asyncIterator]();
  // An error before the first event (a task not found, a refused message) is a plain JSON-RPC answer.
  let first: IteratorResult<{ id: unknown }>;
  try {
    first = await events.next();
  } catch (error) {
    return answerJson(c, jsonRpcError(requestId(text), error), handler.refusal);
  }
  const encoder = new TextEncoder();
  let sent = 0;
  const frame = (event: unknown) => {
    const id = handler.eventIds[sent++] ?? null;
    return encoder.encode(`${id ? `id: ${id}\n` : ""}data: ${JSON.stringify(event)}\n\n`);
  };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      if (!first.done) controller.enqueue(frame(first.value));
      else controller.close();
    },
    async pull(controller) {
      try {
        const next = await events.next();
        if (next.done) controller.close();
        else controller.enqueue(frame(next.value));
      } catch (error) {
        controller.enqueue(
          encoder.encode(`event: error\ndata: ${JSON.stringify(jsonRpcError(requestId(text), error))}\n\n`),
        );
        controller.close();
      }
    },
    async cancel() {
      await events.return?.(undefined);
    },
  });
  return new Response(body, { headers: SSE_HEADERS });
}

/** The front door's card at the origin's own well-known address too (RFC 8615): where A2A clients look first. */
export const rootAgentCard = (c: Ctx) => card(c, null);

export const a2a = new Hono<AppEnv>()
  .get("/.well-known/agent-card.json", (c) => card(c, null))
  .get("/:agent/.well-known/agent-card.json", (c) => card(c, c.req.param("agent")))
  .post("/", apiKeyAuth(), (c) => rpc(c, null))
  .post("/:agent", apiKeyAuth(), (c) => rpc(c, c.req.param("agent")));
