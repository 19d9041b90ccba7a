import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { expectForgedCursorsRefused } from "./forged-cursors";
import { BETA_KEY, call, putSecret } from "./helpers";

/**
 * The tenant vault's API (docs/security.md, The tenant vault): a value goes in and never comes
 * out; a listing says who uses each secret; a secret in use stays; every tenant sees only its own.
 */

const VALUE = "Bearer vault-test-value-7f3a";

const rowsOf = (tenant: string) =>
  env.DB.prepare("SELECT * FROM vault_secrets WHERE tenant = ?1 ORDER BY name")
    .bind(tenant)
    .all<Record<string, unknown>>();

describe("storing a secret", () => {
  it("answers its bookkeeping, never its value; a second PUT replaces the value and says when", async () => {
    const created = await call("PUT", "/v1/secrets/crm-token", { value: VALUE });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({
      name: "crm-token",
      created_at: expect.any(String),
      rotated_at: null,
      used_by: { agents: [], tools: [] },
    });
    const replaced = await call("PUT", "/v1/secrets/crm-token", { value: `${VALUE}-2` });
    expect(replaced.status).toBe(200);
    expect(replaced.json).toMatchObject({ name: "crm-token", created_at: created.json.created_at });
    expect(replaced.json.rotated_at).toEqual(expect.any(String));
    for (const res of [created, replaced, await call("GET", "/v1/secrets/crm-token"), await call("GET", "/v1/secrets")])
      expect(JSON.stringify(res.json)).not.toContain("vault-test-value");
  });

  it("keeps only sealed text in D1: no column holds the value", async () => {
    await putSecret("sealed-check", VALUE);
    const { results } = await rowsOf("alpha");
    const row = results.find((r) => r.name === "sealed-check")!;
    expect(row).toMatchObject({ format: 1, key_id: expect.any(String), rotated_at: null });
    expect(JSON.stringify(row)).not.toContain("vault-test-value");
  });

  it("refuses a bad name or value with a coded 400 that quotes nothing of the value, and stores nothing", async () => {
    const before = (await rowsOf("alpha")).results.length;
    const bad: [string, unknown, string][] = [
      ["/v1/secrets/1starts-with-digit", { value: VALUE }, "VALIDATION_FAILED"],
      ["/v1/secrets/has.dot", { value: VALUE }, "VALIDATION_FAILED"],
      ["/v1/secrets/empty", { value: "" }, "VALIDATION_FAILED"],
      ["/v1/secrets/newline", { value: "Bearer vault-test-value\r\nX-Injected: 1" }, "VALIDATION_FAILED"],
      ["/v1/secrets/big", { value: "vault-test-value".padEnd(9 * 1024, "x") }, "VALIDATION_FAILED"],
      ["/v1/secrets/extra", { value: VALUE, note: "vault-test-value" }, "VALIDATION_FAILED"],
      ["/v1/secrets/number", { value: 42 }, "VALIDATION_FAILED"],
    ];
    for (const [path, body, code] of bad) {
      const res = await call("PUT", path, body);
      expect(res.status, path).toBe(400);
      expect(res.json.error.code, path).toBe(code);
      expect(JSON.stringify(res.json), path).not.toContain("vault-test-value");
    }
    const broken = await call("PUT", "/v1/secrets/broken", `{"value": "vault-test-value-broken`);
    expect(broken.status).toBe(400);
    expect(broken.json.error.code).toBe("INVALID_JSON");
    expect(JSON.stringify(broken.json)).not.toContain("vault-test-value");
    expect((await rowsOf("alpha")).results.length).toBe(before);
  });
});

describe("who uses a secret", () => {
  it("lists the agents and tools whose definitions name it; a secret in use is not deleted", async () => {
    await putSecret("shared-auth", VALUE);
    await putSecret("hook-signing", "whsec_c2lnbmluZy1rZXktZm9yLXRoZS1ob29r");
    const tool = await call("PUT", "/v1/tools/crm", {
      name: "crm",
      kind: "http",
      url: "https://crm.test/call",
      headers: { Authorization: "shared-auth" },
    });
    expect(tool.status).toBe(201);
    const agent = await call("PUT", "/v1/agents/crm-hook", {
      name: "crm-hook",
      kind: "webhook",
      endpoint: "https://crm.test/agent",
      signing_secret: "hook-signing",
      headers: { "X-Api-Key": "shared-auth" },
    });
    expect(agent.status).toBe(201);
    expect((await call("GET", "/v1/secrets/shared-auth")).json.used_by).toEqual({
      agents: ["crm-hook"],
      tools: ["crm"],
    });
    const listed = (await call("GET", "/v1/secrets?limit=200")).json.items;
    expect(listed.find((s: { name: string }) => s.name === "hook-signing").used_by).toEqual({
      agents: ["crm-hook"],
      tools: [],
    });

    const refused = await call("DELETE", "/v1/secrets/shared-auth");
    expect(refused.status).toBe(409);
    expect(refused.json.error).toMatchObject({
      code: "SECRET_IN_USE",
      details: { secret: "shared-auth", used_by: { agents: ["crm-hook"], tools: ["crm"] } },
    });
    expect((await call("GET", "/v1/secrets/shared-auth")).status).toBe(200);

    expect((await call("DELETE", "/v1/tools/crm")).status).toBe(204);
    expect((await call("DELETE", "/v1/agents/crm-hook")).status).toBe(204);
    expect((await call("DELETE", "/v1/secrets/shared-auth")).status).toBe(204);
    expect((await call("GET", "/v1/secrets/shared-auth")).json.error.code).toBe("SECRET_NOT_FOUND");
    expect((await call("DELETE", "/v1/secrets/shared-auth")).json.error.code).toBe("SECRET_NOT_FOUND");
  });

  it("a signing_secret must hold Standard Webhooks secrets", async () => {
    await putSecret("not-whsec", "plain text");
    const res = await call("PUT", "/v1/agents/bad-signing", {
      name: "bad-signing",
      kind: "webhook",
      endpoint: "https://crm.test/agent",
      signing_secret: "not-whsec",
    });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({
      code: "VALIDATION_FAILED",
      details: { issues: [{ path: "signing_secret" }] },
    });
    expect(JSON.stringify(res.json)).not.toContain("plain text");
    expect((await call("GET", "/v1/agents/bad-signing")).status).toBe(404);
  });

  it("refuses signing_secret where nothing is signed, and beside signing: none", async () => {
    await putSecret("some-signing", "whsec_c2lnbmluZy1rZXktZm9yLXRoZS1ob29r");
    const cases: [string, string, unknown][] = [
      ["agents", "model-agent", { name: "model-agent", signing_secret: "some-signing" }],
      ["agents", "model-headers", { name: "model-headers", headers: { "X-Key": "some-signing" } }],
      [
        "agents",
        "unsigned",
        {
          name: "unsigned",
          kind: "webhook",
          endpoint: "https://crm.test/a",
          signing: "none",
          signing_secret: "some-signing",
        },
      ],
      ["tools", "mcp-signed", { name: "mcp-signed", kind: "mcp", url: "https://m.test/", signing_secret: "x" }],
      ["tools", "client-h", { name: "client-h", kind: "client", headers: { "X-Key": "some-signing" } }],
      [
        "tools",
        "webhook-h",
        { name: "webhook-h", kind: "http", url: "https://t.test/", headers: { "Webhook-Id": "x" } },
      ],
    ];
    for (const [kind, name, body] of cases) {
      const res = await call("PUT", `/v1/${kind}/${name}`, body);
      expect(res.status, name).toBe(400);
      expect(res.json.error.code, name).toBe("VALIDATION_FAILED");
    }
  });
});

describe("tenants' vaults", () => {
  it("are apart: a name is per tenant, and nobody lists, reads or deletes another's", async () => {
    await putSecret("same-name", VALUE);
    await putSecret("same-name", "beta's own value", BETA_KEY);
    await putSecret("alpha-only", VALUE);
    const betaList = (await call("GET", "/v1/secrets", undefined, { key: BETA_KEY })).json.items;
    expect(betaList.map((s: { name: string }) => s.name)).toEqual(["same-name"]);
    expect((await call("GET", "/v1/secrets/alpha-only", undefined, { key: BETA_KEY })).status).toBe(404);
    expect((await call("DELETE", "/v1/secrets/alpha-only", undefined, { key: BETA_KEY })).status).toBe(404);
    expect((await call("GET", "/v1/secrets/alpha-only")).status).toBe(200);
  });

  it("pages in name order", async () => {
    for (const name of ["page-a", "page-b", "page-c"]) await putSecret(name, VALUE, BETA_KEY);
    const names: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { json: { items: { name: string }[]; next_cursor: string | null } } = await call(
        "GET",
        `/v1/secrets?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
        undefined,
        { key: BETA_KEY },
      );
      names.push(...page.json.items.map((s) => s.name));
      cursor = page.json.next_cursor;
    } while (cursor !== null);
    expect(names).toEqual(["page-a", "page-b", "page-c", "same-name"]);
  });

  it("refuse a cursor the list did not hand out", async () => {
    const first = await call("GET", "/v1/secrets?limit=1");
    expect(first.json.next_cursor).toEqual(expect.any(String));
    await expectForgedCursorsRefused("/v1/secrets?limit=1", first.json.next_cursor);
  });

  it("need an API key to read or write", async () => {
    expect((await call("PUT", "/v1/secrets/x", { value: VALUE }, { key: null })).status).toBe(401);
    expect((await call("GET", "/v1/secrets", undefined, { key: null })).status).toBe(401);
  });
});
