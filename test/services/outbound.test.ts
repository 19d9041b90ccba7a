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

/**
 * What callers resolve before an outbound call: the policy from the deployment's vars, and
 * the delivery's signing — the operator's per-agent or per-tool secret, else the tenant's
 * (read from D1 once per SIGNING_TTL_MS per isolate), none only when the definition says so.
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

describe("a delivery's signing", () => {
  const vars = { ...env, AGENT_SECRET_OWN: "whsec_a, whsec_b", TOOL_SECRET_OWN_TOOL: "whsec_t" };

  it("uses the operator's secret when set, the tenant's otherwise, none only when the definition says so", async () => {
    const tenant = freshTenant();
    const own = await agentOutbound(vars, tenant, { name: "own" });
    expect(own.signing).toEqual({ ok: true, secrets: ["whsec_a", "whsec_b"], by: "AGENT_SECRET_OWN" });
    expect((await toolOutbound(vars, tenant, { name: "own-tool" })).signing).toEqual({
      ok: true,
      secrets: ["whsec_t"],
      by: "TOOL_SECRET_OWN_TOOL",
    });
    const { secret } = await ensureSigningSecret(env.DB, tenant);
    for (const resolved of [
      await agentOutbound(vars, tenant, { name: "other" }),
      await toolOutbound(vars, tenant, { name: "other", signing: "signed" }),
    ])
      expect(resolved.signing).toEqual({ ok: true, secrets: [secret], by: "the tenant's signing secret" });
    expect((await agentOutbound(vars, tenant, { name: "own", signing: "none" })).signing).toEqual({
      ok: true,
      secrets: [],
      by: "none",
    });
  });

  it("says so, and sends nothing, when D1 cannot give the tenant's secret", async () => {
    const tenant = freshTenant();
    await env.DB.exec("ALTER TABLE signing_secrets RENAME TO signing_secrets_offline");
    try {
      const resolved = await agentOutbound(vars, tenant, { name: "other" });
      expect(resolved.signing).toEqual({ ok: false, message: expect.stringContaining("could not be read") });
    } finally {
      await env.DB.exec("ALTER TABLE signing_secrets_offline RENAME TO signing_secrets");
    }
    // The failure is not cached.
    expect((await agentOutbound(vars, tenant, { name: "other" })).signing.ok).toBe(true);
  });
});
