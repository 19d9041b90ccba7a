import { exports } from "cloudflare:workers";
import { checkResponse } from "./openapi-conformance";

export const ALPHA_KEY = "alpha-test-key";
export const BETA_KEY = "beta-test-key";
/** The operator's key for /v1/operator (vitest.config.ts). */
export const OPERATOR_KEY = "operator-test-key-0123456789";

/**
 * Calls the Worker as a client would, with the alpha tenant's key unless told otherwise.
 * Every answer is checked against the OpenAPI document (./openapi-conformance.ts).
 */
export async function call(
  method: string,
  path: string,
  body?: unknown,
  { key = ALPHA_KEY, headers = {} }: { key?: string | null; headers?: Record<string, string> } = {},
): Promise<{ status: number; json: any; headers: Headers }> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (key) (init.headers as Record<string, string>).Authorization = `Bearer ${key}`;
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)["Content-Type"] ??= "application/json";
  }
  const response = await (exports as any).default.fetch(new Request(`http://relay.test${path}`, init));
  const text = await response.text();
  let json: any = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = text;
  }
  checkResponse(
    method.toUpperCase(),
    `http://relay.test${path}`,
    response.status,
    response.headers.get("Content-Type"),
    json,
  );
  return { status: response.status, json, headers: response.headers };
}

/** Registers agents for the alpha tenant (PUT /v1/agents/:name), failing the set-up on a refusal. */
export async function putAgents(agents: readonly { name: string }[]): Promise<void> {
  for (const agent of agents) {
    const res = await call("PUT", `/v1/agents/${agent.name}`, agent);
    if (res.status >= 300) throw new Error(`PUT ${agent.name}: ${JSON.stringify(res.json)}`);
  }
}

/** A new session on `agent` for the alpha tenant, a day long; its id. */
export async function newSession(agent: string): Promise<string> {
  const res = await call("POST", "/v1/sessions", { agent, ttl_s: 86_400 });
  if (res.status !== 201) throw new Error(JSON.stringify(res.json));
  return res.json.id;
}

/** A user message that runs the session's agent. */
export const say = (id: string, content: string) =>
  call("POST", `/v1/sessions/${id}/messages`, { role: "user", content });

/**
 * A user message asking for Server-Sent Events (`POST /v1/sessions/:id/messages` with
 * `Accept: text/event-stream`): the raw response, its stream not read.
 */
export const streamed = (id: string, content: string, key: string = ALPHA_KEY): Promise<Response> =>
  (exports as unknown as { default: Fetcher }).default.fetch(`http://relay.test/v1/sessions/${id}/messages`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify({ role: "user", content }),
  });

/** Stores a secret in a tenant's vault (alpha's unless `key` says otherwise), failing the set-up on a refusal. */
export async function putSecret(name: string, value: string, key: string = ALPHA_KEY): Promise<void> {
  const res = await call("PUT", `/v1/secrets/${name}`, { value }, { key });
  if (res.status >= 300) throw new Error(`PUT secret ${name}: ${JSON.stringify(res.json)}`);
}
