import { exports } from "cloudflare:workers";
import { checkResponse } from "./openapi-conformance";

export const ALPHA_KEY = "alpha-test-key";
export const BETA_KEY = "beta-test-key";

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
