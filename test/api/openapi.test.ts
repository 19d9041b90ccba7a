import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { openApiJson } from "../../src/api/spec/document";
import { app } from "../../src/app";
import { ERROR_STATUS } from "../../src/errors/codes";
import { checkResponse, openApiDocument, STATIC_ROUTES } from "./openapi-conformance";

/**
 * The OpenAPI document against the app: the file served at /openapi.json is what the spec
 * modules give, every route the app mounts is documented and every documented route is
 * mounted (or served as a static file). That real responses fit their documented schemas is
 * checked on every `call()` of the API tests (./openapi-conformance.ts); the cases at the
 * end show that check failing on a body, a status or a code the document does not allow.
 */

/** The platform serves static assets before the Worker; the test pool calls the Worker directly, so ask the assets. */
const asset = (path: string) => env.ASSETS.fetch(new Request(`http://relay.test${path}`));

const operations = Object.entries(openApiDocument.paths as Record<string, Record<string, any>>).flatMap(
  ([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, operation })),
);

describe("GET /openapi.json", () => {
  it("is public/openapi.json as npm run client:generate writes it from src/api/spec (run it when this fails)", async () => {
    const response = await asset("/openapi.json");
    expect(response.status).toBe(200);
    // Compared whole: a schema or an operation changed without regenerating the file fails here.
    expect(await response.text()).toBe(openApiJson());
  });

  it("is OpenAPI 3.1, public, with the bearer scheme on every /v1 route but the signed webhooks and the operator's", async () => {
    const response = await asset("/openapi.json");
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
    const json = (await response.json()) as Record<string, any>;
    expect(json.openapi).toBe("3.1.0");
    expect(json.components.securitySchemes.bearer).toEqual(expect.objectContaining({ type: "http", scheme: "bearer" }));
    expect(json.security).toEqual([{ bearer: [] }]);
    expect(json.components.securitySchemes.operator).toEqual(
      expect.objectContaining({ type: "http", scheme: "bearer" }),
    );
    for (const { key, operation } of operations) {
      const open = operation.security?.length === 0;
      const keyed = key.includes(" /v1/") || key.startsWith("POST /a2a") || key.endsWith(" /mcp");
      expect(open, key).toBe(!keyed || key.startsWith("POST /v1/webhooks/"));
      // The operator's routes take the operator's key, and only they do.
      const operator = JSON.stringify(operation.security) === JSON.stringify([{ operator: [] }]);
      expect(operator, key).toBe(key.includes(" /v1/operator/"));
    }
    // The served document is the one the conformance check reads.
    expect(json).toEqual(openApiDocument);
  });

  it("documents every route the app mounts, and mounts every route it documents but the static files", async () => {
    const mounted = new Set(
      app.routes
        .filter((route) => route.method !== "ALL")
        .map((route) => `${route.method} ${route.path.replace(/:([a-z_]+)/g, "{$1}")}`),
    );
    const documented = new Set(operations.map((o) => o.key));
    expect([...mounted].filter((key) => !documented.has(key))).toEqual([]);
    expect([...documented].filter((key) => !mounted.has(key))).toEqual(STATIC_ROUTES);
    expect(mounted.size).toBeGreaterThan(40);
    for (const key of STATIC_ROUTES) {
      const response = await asset(key.split(" ")[1]!);
      expect(response.status, key).toBe(200);
      await response.body?.cancel();
    }
  });

  it("gives every operation a unique id, a summary, a success answer and its error codes under their statuses", () => {
    const ids = operations.map((o) => o.operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { key, operation } of operations) {
      expect(operation.summary, key).toBeTruthy();
      const statuses = Object.keys(operation.responses).map(Number);
      // A stateless MCP server only refuses GET and DELETE (405): the one kind of operation with no success.
      const refusesOnly = key === "GET /mcp" || key === "DELETE /mcp";
      expect(
        statuses.some((s) => s >= 100 && s < 300),
        key,
      ).toBe(!refusesOnly);
      for (const status of statuses.filter((s) => s >= 400)) {
        const schema = operation.responses[status].content["application/json"].schema;
        // /mcp's protocol errors are the MCP SDK's JSON-RPC errors, not Relay's error body.
        if (key.endsWith(" /mcp") && schema.properties?.jsonrpc) continue;
        const codes: string[] = schema.properties.error.properties.code.enum;
        for (const code of codes)
          expect(ERROR_STATUS[code as keyof typeof ERROR_STATUS], `${key} ${code}`).toBe(status);
      }
    }
  });

  it("lists 400 INVALID_CURSOR on every operation that takes a cursor or an after position", () => {
    const paged = operations.filter(({ operation }) =>
      (operation.parameters ?? []).some((p: any) => p.in === "query" && (p.name === "cursor" || p.name === "after")),
    );
    expect(paged.length).toBeGreaterThanOrEqual(12);
    for (const { key, operation } of paged) {
      const codes: string[] =
        operation.responses[400]?.content["application/json"].schema.properties.error.properties.code.enum ?? [];
      expect(codes, key).toContain("INVALID_CURSOR");
    }
  });

  it("resolves every reference to a component it has", () => {
    const text = JSON.stringify(openApiDocument);
    const refs = new Set([...text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!));
    expect(refs.size).toBeGreaterThan(10);
    for (const ref of refs) expect(openApiDocument.components.schemas[ref], ref).toBeDefined();
  });
});

describe("the conformance check on every API test's response", () => {
  const session = { id: "ses_x", status: "active" };

  it("refuses a body that does not fit the documented schema", () => {
    expect(() => checkResponse("GET", "http://relay.test/v1/sessions/ses_x", 200, "application/json", session)).toThrow(
      /does not fit its schema/,
    );
    expect(() =>
      checkResponse("GET", "http://relay.test/health", 200, "application/json", {
        ok: true,
        service: "relay",
        extra: 1,
      }),
    ).toThrow(/does not fit/);
    expect(() =>
      checkResponse("GET", "http://relay.test/health", 200, "application/json", { ok: true, service: "relay" }),
    ).not.toThrow();
  });

  it("refuses a status, an error code or a route the document does not list", () => {
    expect(() => checkResponse("GET", "http://relay.test/health", 201, "application/json", {})).toThrow(
      /does not document/,
    );
    const error = (code: string) => ({ error: { code, message: "m" } });
    expect(() =>
      checkResponse("GET", "http://relay.test/v1/agents/a", 404, "application/json", error("SESSION_NOT_FOUND")),
    ).toThrow(/does not fit/);
    expect(() =>
      checkResponse("GET", "http://relay.test/v1/agents/a", 404, "application/json", error("AGENT_NOT_FOUND")),
    ).not.toThrow();
    expect(() => checkResponse("PUT", "http://relay.test/v1/nothing", 200, "application/json", {})).toThrow(
      /not in the document/,
    );
  });

  it("matches a literal segment before a parameter", () => {
    const stats = {
      registry_version: 1,
      agents: 0,
      enabled_agents: 0,
      compile_ms: 0,
      compiled_agents: 0,
      linked_shards: 1,
      link_ms: 0,
      build_ms: 0,
      shards: 1,
      load_ms: 0,
      memory_bytes: 0,
      object_memory_bytes: 0,
      router_budget: { bytes: 64_000_000, held_bytes: 0, held: true },
      pattern_budget: { used: 0, limit: 131_072, prefix: 1024 },
    };
    expect(() =>
      checkResponse("GET", "http://relay.test/v1/route/stats", 200, "application/json", stats),
    ).not.toThrow();
  });
});

describe("static pages", () => {
  it.each([
    ["/", /<title>Relay<\/title>/],
    ["/docs", /<title>Relay API reference<\/title>/],
  ])("%s is a static page, served without a key", async (path, title) => {
    const response = await asset(path);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toMatch(/^text\/html/);
    expect(await response.text()).toMatch(title);
  });
});
