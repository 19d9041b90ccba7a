import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { activeSecrets, ensureSigningSecret, rotateSigningSecret } from "../../src/registry/signing-secrets";
import {
  agentOutbound,
  allowLocalEndpoints,
  forgetSigningSecret,
  outboundPolicy,
  SIGNING_TTL_MS,
  tenantSigningSecret,
  toolOutbound,
} from "../../src/services/outbound";
import { storeSecret } from "../../src/vault/secrets";

/**
 * What callers resolve before an outbound call: the policy from the deployment's vars, the
 * delivery's signing — the vault secret the definition names, else the tenant's signing
 * secret (read from D1 once per SIGNING_TTL_MS per isolate), none only when the definition
 * says so — and the headers, their values from the tenant's vault, never from the Worker's env.
 */

const T = Date.UTC(2026, 0, 1);
let counter = 0;
const freshTenant = () => `signing-${++counter}`;

describe("the policy from the deployment's vars", () => {
  it("switches local endpoints on only for RELAY_ALLOW_LOCAL_ENDPOINTS=true", () => {
    expect(allowLocalEndpoints({ RELAY_ALLOW_LOCAL_ENDPOINTS: "true" })).toBe(true);
    expect(allowLocalEndpoints({ RELAY_ALLOW_LOCAL_ENDPOINTS: " TRUE " })).toBe(true);
    for (const value of [undefined, "", "false", "1", "yes"])
      expect(allowLocalEndpoints({ RELAY_ALLOW_LOCAL_ENDPOINTS: value }), String(value)).toBe(false);
  });

  it("knows RELAY_HOSTS, and the request's own host on the HTTP path", () => {
    expect(outboundPolicy({ RELAY_HOSTS: "relay.example.com" }).relayHosts).toEqual([
      { hostname: "relay.example.com", port: null },
    ]);
    expect(outboundPolicy({}, "http://127.0.0.1:8790/v1/agents/x")).toEqual({
      allowLocal: false,
      relayHosts: [{ hostname: "127.0.0.1", port: "8790" }],
    });
  });
});

describe("the tenant's signing secret, per isolate", () => {
  it(`is read once per ${SIGNING_TTL_MS} ms; a rotation through this isolate is seen at once`, async () => {
    const tenant = freshTenant();
    const first = await tenantSigningSecret(env.DB, tenant, T);
    // Rotated elsewhere (D1 only): this isolate signs with what it read until the TTL ends.
    const elsewhere = await rotateSigningSecret(env.DB, tenant, 60);
    expect((await tenantSigningSecret(env.DB, tenant, T + SIGNING_TTL_MS - 1)).secret).toBe(first.secret);
    expect((await tenantSigningSecret(env.DB, tenant, T + SIGNING_TTL_MS)).secret).toBe(elsewhere.secret);
    const here = await rotateSigningSecret(env.DB, tenant, 60);
    forgetSigningSecret(tenant);
    expect((await tenantSigningSecret(env.DB, tenant, T + SIGNING_TTL_MS + 1)).secret).toBe(here.secret);
  });

  it("is made once even when first read concurrently", async () => {
    const tenant = freshTenant();
    const reads = await Promise.all([1, 2, 3].map(() => ensureSigningSecret(env.DB, tenant)));
    expect(new Set(reads.map((r) => r.secret)).size).toBe(1);
  });

  it("signs with the replaced secret too until its grace ends, current first", async () => {
    const tenant = freshTenant();
    const now = new Date(T);
    const a = await ensureSigningSecret(env.DB, tenant, now);
    const b = await rotateSigningSecret(env.DB, tenant, 3600, now);
    expect(b.previous).toEqual({ secret: a.secret, expires_at: new Date(T + 3_600_000).toISOString() });
    expect(activeSecrets(b, T + 3_599_999)).toEqual([b.secret, a.secret]);
    expect(activeSecrets(b, T + 3_600_000)).toEqual([b.secret]);
    // A second rotation keeps only the secret it replaces.
    const c = await rotateSigningSecret(env.DB, tenant, 3600, new Date(T + 1000));
    expect(activeSecrets(c, T + 2000)).toEqual([c.secret, b.secret]);
  });

  it("a first rotation of a tenant that never had a secret keeps nothing it never showed", async () => {
    const rotated = await rotateSigningSecret(env.DB, freshTenant(), 3600);
    expect(rotated.previous).toBeNull();
  });
});

describe("a delivery's signing and headers", () => {
  const SIGNING = "whsec_c2lnbmluZy1zZWNyZXQtZnJvbS10aGUtdmF1bHQ=";

  it("signs with the vault secret the definition names, the tenant's otherwise, none only when it says so", async () => {
    const tenant = freshTenant();
    await storeSecret(env, tenant, "own-signing", `${SIGNING}, whsec_b2xkLXNpZ25pbmc=`);
    const own = await agentOutbound(env, tenant, { name: "own", signing_secret: "own-signing" });
    expect(own).toMatchObject({
      tenant,
      signing: { ok: true, secrets: [SIGNING, "whsec_b2xkLXNpZ25pbmc="], by: "the vault secret 'own-signing'" },
      headers: { ok: true, values: {} },
    });
    const { secret } = await ensureSigningSecret(env.DB, tenant);
    for (const resolved of [
      await agentOutbound(env, tenant, { name: "other" }),
      await toolOutbound(env, tenant, { name: "other", signing: "signed" }),
    ])
      expect(resolved.signing).toEqual({ ok: true, secrets: [secret], by: "the tenant's signing secret" });
    expect((await agentOutbound(env, tenant, { name: "own", signing: "none" })).signing).toEqual({
      ok: true,
      secrets: [],
      by: "none",
    });
  });

  it("never reads the Worker's environment: an agent named like an operator secret signs with the tenant's", async () => {
    const tenant = freshTenant();
    // The test Worker has AGENT_SECRET_HOOK and TOOL_SECRET_LOOKUP_ORDER (vitest.config.ts).
    expect(env.AGENT_SECRET_HOOK).toMatch(/^whsec_/);
    const { secret } = await ensureSigningSecret(env.DB, tenant);
    expect((await agentOutbound(env, tenant, { name: "hook" })).signing).toMatchObject({ secrets: [secret] });
    expect((await toolOutbound(env, tenant, { name: "lookup_order" })).signing).toMatchObject({ secrets: [secret] });
    for (const name of ["RELAY_API_KEYS", "AGENT_SECRET_HOOK", "RELAY_VAULT_KEY"]) {
      const resolved = await toolOutbound(env, tenant, { name: "leak", headers: { "X-Leak": name } });
      expect(resolved.headers).toEqual({
        ok: false,
        code: "UNKNOWN_SECRET",
        message: `tool 'leak': headers.X-Leak names the secret '${name}', which is not in this tenant's vault: store it with PUT /v1/secrets/${name}`,
      });
    }
  });

  it("sends the header values from the vault; a missing signing secret fails signing and headers alike", async () => {
    const tenant = freshTenant();
    await storeSecret(env, tenant, "token", "Bearer t-1");
    const resolved = await toolOutbound(env, tenant, { name: "crm", headers: { Authorization: "token" } });
    expect(resolved.headers).toEqual({ ok: true, values: { Authorization: "Bearer t-1" } });
    const missing = await agentOutbound(env, tenant, {
      name: "crm",
      signing_secret: "gone",
      headers: { Authorization: "token" },
    });
    expect(missing.signing).toMatchObject({ ok: false, code: "UNKNOWN_SECRET" });
    expect(missing.headers).toMatchObject({ ok: false, code: "UNKNOWN_SECRET" });
  });

  it("says so, and sends nothing, when D1 cannot give the tenant's secret", async () => {
    const tenant = freshTenant();
    await env.DB.exec("ALTER TABLE signing_secrets RENAME TO signing_secrets_offline");
    try {
      const resolved = await agentOutbound(env, tenant, { name: "other" });
      expect(resolved.signing).toEqual({
        ok: false,
        code: "DEPENDENCY_UNAVAILABLE",
        message: expect.stringContaining("could not be read"),
      });
    } finally {
      await env.DB.exec("ALTER TABLE signing_secrets_offline RENAME TO signing_secrets");
    }
    // The failure is not cached.
    expect((await agentOutbound(env, tenant, { name: "other" })).signing.ok).toBe(true);
  });
});
