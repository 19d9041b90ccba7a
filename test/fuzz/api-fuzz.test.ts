import { env, exports } from "cloudflare:workers";
import fc from "fast-check";
import { HttpResponse, http } from "msw";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { BETA_KEY, call } from "../api/helpers";
import { checkResponse, STATIC_ROUTES } from "../api/openapi-conformance";
import { fakeMcpServer } from "../fakes/mcp-server";
import { llmServer } from "../fakes/server";
import { AIMED_BODIES, BASELINES, BODY_LIMITS, EXTRA_BODIES, paramArbitrary } from "./cases";
import { createdSessions, type Fixtures, freshFixtures, MCP_URL } from "./fixtures";
import { type BodyCase, bodyCases, garbageQueryValue } from "./inputs";
import { watch } from "./leaks";
import { snapshot, vaultRows } from "./snapshot";

/**
 * Every operation in the served /openapi.json (public/openapi.json, read from the assets as the
 * platform serves it), sent generated invalid and boundary input (./inputs.ts: wrong types,
 * missing and unknown fields, empty, oversized, NUL and lone-surrogate strings, deep JSON,
 * numbers out of range; ids of another tenant or of nothing; no key or a wrong one). For every answer: never a 5xx; the status and error code are ones
 * the document lists for the operation, and the body fits its schema; a refused write changed
 * nothing (./snapshot.ts, before and after); no answer, header or error holds a value stored in
 * a vault or a Worker secret (./leaks.ts); no write changes beta's vault. A fixed seed and a
 * fixed number of cases per operation keep the run repeatable; a failing case found here is
 * kept as a plain test.
 */

const SEED = 0x5eed_2026;
/** Cases per operation: more where there is a body to take apart. */
const RUNS = { body: 64, other: 22 };

type Json = Record<string, any>;
const worker = () => (exports as unknown as { default: Fetcher }).default;

/** The platform answers a static file's route from the assets, before the Worker (wrangler.toml, `[assets]`). */
const servedBy = (method: string, template: string): Fetcher =>
  STATIC_ROUTES.includes(`${method} ${template}`) ? env.ASSETS : worker();

const doc: Json = await (await env.ASSETS.fetch("http://relay.test/openapi.json")).json();
const components: Json = doc.components.schemas;
const operations = Object.entries(doc.paths as Json).flatMap(([template, item]) =>
  Object.entries(item as Json).map(([method, op]) => ({ template, method: method.toUpperCase(), op: op as Json })),
);

const WEBHOOK_SECRETS: Record<string, string> = {
  crm: "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD",
  desk: "whsec_Kp8wqd1MxVOA0F3kJq2XbQz6YH3lQm1S",
};

interface Case {
  params: string[];
  query: [string, string][];
  body: BodyCase | null;
  /** `alpha`; or what an unauthenticated caller sends. */
  auth: "alpha" | "none" | "wrong" | "malformed";
  /** Webhooks: signed with the source's secret, not signed, or with made-up signature headers. */
  signature: "signed" | "unsigned" | "forged";
  accept: "json" | "event-stream";
  /** A value for the operation's own documented header (Idempotency-Key), or none. */
  header: string | null;
}

let fixtures: Fixtures;
/** The snapshot after the last refused write, while nothing has been accepted since. */
let unchanged: unknown = null;
let cases = 0;
/** Beta's vault as its fixtures left it: no case calls with beta's key, so no answer to alpha may change it. */
let betaVault: unknown[] | null = null;
/** Answers by status, for the closing line. */
const statuses = new Map<number, number>();

beforeEach(() => {
  // Where an accepted events subscription sends its deliveries: answered, so nothing fails outside the
  // request; and the MCP server the fixture tool lists (with a token from the vault). Each test's own,
  // as the setup resets handlers after every test.
  llmServer.use(
    http.all("https://hooks.fuzz.test/*", () => new HttpResponse(null, { status: 204 })),
    fakeMcpServer(MCP_URL).handler,
  );
});

afterAll(() => {
  const byStatus = [...statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status}×${n}`);
  console.log(`API fuzz: ${cases} cases over ${operations.length} operations, seed ${SEED}: ${byStatus.join(" ")}`);
});

function caseArbitrary(template: string, method: string, op: Json, f: Fixtures): fc.Arbitrary<Case> {
  const names = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  const queryParams = (op.parameters ?? []).filter((p: Json) => p.in === "query").map((p: Json) => p.name as string);
  const schema = op.requestBody?.content?.["application/json"]?.schema;
  const baseline = BASELINES[op.operationId]?.(f);
  const body =
    schema === undefined
      ? fc.constant(null)
      : bodyCases(
          baseline,
          schema,
          components,
          BODY_LIMITS[op.operationId] ?? 1024 * 1024,
          EXTRA_BODIES[op.operationId],
          AIMED_BODIES[op.operationId],
        );
  return fc.record({
    params: fc.tuple(...names.map((name) => paramArbitrary(template, method, name, f))),
    query: fc.array(fc.tuple(fc.constantFrom(...queryParams, "zz", "limit", "cursor"), garbageQueryValue), {
      maxLength: 3,
    }),
    body,
    auth: fc.oneof(
      { weight: 12, arbitrary: fc.constant("alpha" as const) },
      { weight: 1, arbitrary: fc.constantFrom("none" as const, "wrong" as const, "malformed" as const) },
    ),
    signature: fc.constantFrom("signed" as const, "signed" as const, "unsigned" as const, "forged" as const),
    header: fc.option(fc.constantFrom("", "   ", "k", "a".repeat(201), "\t", "key with spaces", "ü".repeat(3)), {
      nil: null,
    }),
    accept: fc.oneof(
      { weight: 9, arbitrary: fc.constant("json" as const) },
      { weight: 1, arbitrary: fc.constant("event-stream" as const) },
    ),
  });
}

function request(
  template: string,
  method: string,
  op: Json,
  c: Case,
): { url: string; init: RequestInit; label: string } {
  const headerNames: string[] = (op.parameters ?? [])
    .filter((p: Json) => p.in === "header" && !String(p.name).startsWith("webhook-"))
    .map((p: Json) => p.name);
  let i = 0;
  const path = template.replace(/\{[^}]+\}/g, () => c.params[i++]!);
  const query = c.query.map(([k, v]) => `${k}=${v}`).join("&");
  const url = `http://relay.test${path}${query ? `?${query}` : ""}`;
  const headers = new Headers();
  if (c.auth === "alpha") headers.set("Authorization", "Bearer alpha-test-key");
  if (c.auth === "wrong") headers.set("Authorization", "Bearer not-a-key-0000");
  if (c.auth === "malformed") headers.set("Authorization", "Basic YWxwaGE6YWxwaGE=");
  if (c.accept === "event-stream") headers.set("Accept", "text/event-stream");
  if (c.body?.contentType) headers.set("Content-Type", c.body.contentType);
  for (const name of headerNames) if (c.header !== null) headers.set(name, c.header);
  const body = c.body?.body ?? null;
  if (template === "/v1/webhooks/{source}") signWebhook(headers, c, typeof body === "string" ? body : "");
  const label = `${method} ${url.slice(0, 300)} body=[${c.body?.what ?? "none"}] auth=${c.auth} header=${c.header} ${template.includes("webhooks") ? c.signature : ""}`;
  return { url, init: { method, headers, body: method === "GET" ? null : body }, label };
}

function signWebhook(headers: Headers, c: Case, body: string): void {
  if (c.signature === "unsigned") return;
  const id = `msg_fuzz_${cases}_${Date.now()}`;
  const at = new Date();
  headers.set("webhook-id", id);
  headers.set("webhook-timestamp", String(Math.floor(at.getTime() / 1000)));
  const source = c.params[0] ?? "";
  const secret = Object.hasOwn(WEBHOOK_SECRETS, source) ? WEBHOOK_SECRETS[source]! : WEBHOOK_SECRETS.crm!;
  headers.set(
    "webhook-signature",
    c.signature === "signed" ? new Webhook(secret).sign(id, at, body) : "v1,bm90IGEgc2lnbmF0dXJlIGF0IGFsbA==",
  );
}

/** The answer's status and error code, as the document lists them for this operation. */
function documented(op: Json, status: number, json: Json | null): string | null {
  const answer = op.responses[String(status)];
  if (!answer) return `status ${status} is not documented`;
  if (status < 400) return null;
  const schema = answer.content["application/json"].schema;
  // /mcp's protocol errors are the MCP SDK's JSON-RPC errors (docs/mcp-server.md), not Relay's error body.
  if (schema.properties?.jsonrpc)
    return json?.jsonrpc === "2.0" && typeof json?.error?.code === "number" ? null : "not a JSON-RPC error";
  const codes: string[] = schema.properties.error.properties.code.enum;
  const code = json?.error?.code;
  return codes.includes(code) ? null : `error code ${code} is not documented for ${status} (${codes.join(", ")})`;
}

/** A refusal the domain records as such (a handoff refused is a failed handoff): its session may have that record. */
function recordedRefusal(status: number, json: Json | null): boolean {
  return (status === 409 || status === 422) && typeof json?.error?.details?.handoff_id === "string";
}

async function check(template: string, method: string, op: Json, c: Case): Promise<void> {
  cases++;
  const { url, init, label } = request(template, method, op, c);
  const write = method !== "GET";
  // The state a refusal left is the state the next case starts from: taken again only after an accepted write.
  const before = write ? (unchanged ?? (await snapshot(fixtures))) : null;
  unchanged = null;
  const response = await servedBy(method, template).fetch(new Request(url, init));
  response.webSocket?.accept();
  response.webSocket?.close(1000, "fuzz");
  const text = await response.text();
  statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
  let json: Json | null = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    // An event stream, or a 101.
  }
  const fail = (why: string) => {
    throw new Error(`${label}\n  → ${response.status} ${text.slice(0, 400)}\n  ${why}`);
  };
  const putSecret = template === "/v1/secrets/{name}" && method === "PUT";
  const value = putSecret ? sentValue(c.body) : null;
  const leak = watch.find(text, response.headers, `${url} ${sentText(c.body)}`, value);
  if (leak) fail(`the answer holds ${leak}`);
  if (response.status >= 500) fail("a 5xx");
  const unauthenticated = c.auth !== "alpha" && op.security?.length !== 0;
  if (unauthenticated && response.status !== 401) fail("answered without a key");
  // The app's own not-found (a path that matches no route once decoded) is the one undocumented answer.
  const notFound = response.status === 404 && json?.error?.code === "NOT_FOUND";
  const why = notFound ? null : documented(op, response.status, json);
  if (why) fail(why);
  try {
    // (The app's not-found is checked above: a path the URL parser has reshaped — `..`, a trailing
    // slash — can look like a documented route to the conformance check without being one.)
    if (!notFound) checkResponse(method, url, response.status, response.headers.get("Content-Type"), json);
  } catch (error) {
    fail(String((error as Error).message));
  }
  if (value !== null && response.status < 300) watch.addSent(value);
  if (write && response.status < 400) {
    const beta = await vaultRows("beta");
    if (JSON.stringify(beta) !== JSON.stringify(betaVault)) fail(`beta's vault changed:\n${diff(betaVault, beta)}`);
  }
  if (write && response.status >= 400) {
    const after = await snapshot(fixtures);
    if (recordedRefusal(response.status, json)) return;
    if (JSON.stringify(after) !== JSON.stringify(before))
      fail(`a refused write changed state:\n${diff(before, after)}`);
    unchanged = after;
  }
  if (template === "/v1/sessions" && method === "POST" && response.status === 201) createdSessions.alpha.add(json!.id);
}

/** A request body as text (bytes decoded, bad ones replaced). */
function sentText(body: BodyCase | null): string {
  const sent = body?.body ?? "";
  return typeof sent === "string" ? sent : new TextDecoder().decode(sent);
}

/** The value a PUT /v1/secrets body holds, when it is JSON holding a string value. */
function sentValue(body: BodyCase | null): string | null {
  try {
    const value = JSON.parse(sentText(body))?.value;
    return typeof value === "string" ? value : null;
  } catch {
    return null;
  }
}

function diff(before: unknown, after: unknown): string {
  const a = JSON.stringify(before, null, 1).split("\n");
  const b = JSON.stringify(after, null, 1).split("\n");
  const at = a.findIndex((line, i) => line !== b[i]);
  return `  before: ${a.slice(Math.max(0, at - 3), at + 3).join(" ")}\n  after:  ${b.slice(Math.max(0, at - 3), at + 3).join(" ")}`;
}

describe("every operation in /openapi.json, fuzzed", () => {
  it("reads the document", () => {
    expect(operations.length).toBeGreaterThan(50);
    const missing = operations
      .filter(({ op }) => op.requestBody && !BASELINES[op.operationId])
      .map(({ op }) => op.operationId);
    expect(missing, "operations with a body need a valid baseline body in ./cases.ts").toEqual([]);
    const vault = operations.filter(({ template }) => template.startsWith("/v1/secrets"));
    expect(vault.map(({ method, template }) => `${method} ${template}`).sort()).toEqual([
      "DELETE /v1/secrets/{name}",
      "GET /v1/secrets",
      "GET /v1/secrets/{name}",
      "PUT /v1/secrets/{name}",
    ]);
  });

  for (const { template, method, op } of operations) {
    const runs = op.requestBody ? RUNS.body : RUNS.other;
    it(`${method} ${template}: ${runs} cases`, { timeout: 300_000 }, async () => {
      // Reads change nothing, so they share the fixtures the last write operation was given. A PUT of
      // a secret meets a vault with room for one more: the rest of its new names are VAULT_FULL.
      if (method !== "GET" || fixtures === undefined)
        fixtures = await freshFixtures(op.operationId === "putSecretsName" ? { vaultFree: 1 } : {});
      betaVault ??= await vaultRows("beta");
      unchanged = null;
      await fc.assert(
        fc.asyncProperty(caseArbitrary(template, method, op, fixtures), (c) => check(template, method, op, c)),
        { seed: SEED, numRuns: runs, endOnFailure: true },
      );
    });
  }

  it("no session was made but those a 201 answered", { timeout: 60_000 }, async () => {
    const listed = async (key?: string) => {
      const ids: string[] = [];
      let cursor: string | undefined;
      do {
        const page = (
          await call("GET", `/v1/sessions?limit=200${cursor ? `&cursor=${cursor}` : ""}`, undefined, key ? { key } : {})
        ).json;
        ids.push(...page.items.map((s: { id: string }) => s.id));
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      return new Set(ids);
    };
    // The index is fed by the sessions' audit flushes: wait until every answered session is in it.
    const deadline = Date.now() + 30_000;
    let alpha = await listed();
    while ([...createdSessions.alpha].some((id) => !alpha.has(id)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      alpha = await listed();
    }
    expect([...createdSessions.alpha].filter((id) => !alpha.has(id))).toEqual([]);
    expect([...alpha].filter((id) => !createdSessions.alpha.has(id))).toEqual([]);
    const beta = await listed(BETA_KEY);
    expect([...beta].filter((id) => !createdSessions.beta.has(id))).toEqual([]);
  });
});
