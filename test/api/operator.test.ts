import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../src/app";
import { hourOf } from "../../src/quotas/windows";
import { tenantRpc } from "../../src/rpc/stubs";
import { eventually } from "../eventually";
import { ALPHA_KEY, call, OPERATOR_KEY } from "./helpers";

/**
 * The operator's routes (docs/operations.md, Quotas): RELAY_OPERATOR_KEY and never a tenant's
 * key; a tenant's overrides set, read and cleared; one tenant's usage and every tenant's.
 */

const op = (method: string, path: string, body?: unknown) =>
  call(method, `/v1/operator${path}`, body, { key: OPERATOR_KEY });

describe("the operator's key", () => {
  it("is the only key the routes take; a tenant's is refused, and the operator's reaches no tenant route", async () => {
    for (const key of [null, ALPHA_KEY, "operator-test-key-0123456780"]) {
      const res = await call("GET", "/v1/operator/tenants/alpha/quotas", undefined, { key });
      expect(res.status, String(key)).toBe(401);
      expect(res.json.error.code).toBe("UNAUTHORIZED");
    }
    expect((await call("GET", "/v1/agents", undefined, { key: OPERATOR_KEY })).status).toBe(401);
  });

  it("fails closed: without RELAY_OPERATOR_KEY the routes answer 503", async () => {
    for (const key of [undefined, "", "  "]) {
      const response = await app.fetch(
        new Request("http://relay.test/v1/operator/usage", { headers: { Authorization: `Bearer ${OPERATOR_KEY}` } }),
        { ...env, RELAY_OPERATOR_KEY: key },
      );
      expect(response.status).toBe(503);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("AUTH_NOT_CONFIGURED");
    }
  });
});

describe("a tenant's quotas", () => {
  it("are the defaults under the overrides set, each with its source; clearing them brings the defaults back", async () => {
    const before = await op("GET", "/tenants/beta/quotas");
    expect(before.status).toBe(200);
    expect(before.json).toMatchObject({ tenant: "beta", overrides: {}, warnings: [] });
    expect(before.json.request_tiers).toEqual([3, 300, 1200, 6000, 1_000_000]);
    const set = await op("PUT", "/tenants/beta/quotas", { runs_per_minute: 5, tools: null, requests_per_minute: 300 });
    expect(set.json).toMatchObject({
      overrides: { runs_per_minute: 5, tools: null, requests_per_minute: 300 },
      limits: { runs_per_minute: 5, tools: null, requests_per_minute: 300, sessions_per_day: 1_000_000 },
      sources: { runs_per_minute: "override", tools: "override", sessions_per_day: "default" },
    });
    expect((await op("GET", "/tenants/beta/quotas")).json).toEqual(set.json);
    // A PUT replaces the overrides whole.
    expect((await op("PUT", "/tenants/beta/quotas", { agents: 9 })).json.overrides).toEqual({ agents: 9 });
    const cleared = await op("DELETE", "/tenants/beta/quotas");
    expect(cleared.json).toEqual(before.json);
  });

  it("refuses a request limit that is no tier, a value out of range, and a tenant RELAY_API_KEYS does not list", async () => {
    const tier = await op("PUT", "/tenants/beta/quotas", { requests_per_minute: 500 });
    expect(tier.status).toBe(400);
    expect(tier.json.error).toMatchObject({
      code: "VALIDATION_FAILED",
      details: { tiers: [3, 300, 1200, 6000, 1_000_000] },
    });
    for (const body of [{ runs_per_minute: -1 }, { runs_per_minute: 1.5 }, { sessions: 3 }, []])
      expect((await op("PUT", "/tenants/beta/quotas", body)).status, JSON.stringify(body)).toBe(400);
    for (const [method, path] of [
      ["GET", "/tenants/zeta/quotas"],
      ["PUT", "/tenants/zeta/quotas"],
      ["DELETE", "/tenants/zeta/quotas"],
      ["GET", "/tenants/zeta/usage"],
    ] as const) {
      const res = await op(method, path, method === "PUT" ? {} : undefined);
      expect(res.status, path).toBe(404);
      expect(res.json.error).toEqual({
        code: "TENANT_NOT_FOUND",
        message: "RELAY_API_KEYS lists no tenant 'zeta'.",
        details: { tenant: "zeta" },
      });
    }
    expect((await op("GET", "/tenants/beta/quotas")).json.overrides).toEqual({});
  });

  it("apply in this isolate at once: a request tier set by the operator refuses the fourth request", async () => {
    await op("PUT", "/tenants/delta/quotas", { requests_per_minute: 3 });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await call("GET", "/v1/agents", undefined, { key: "delta-test-key" })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});

describe("usage", () => {
  it("of one tenant is its report; of every tenant, each one's totals; the operator's calls count for none", async () => {
    await call("POST", "/v1/sessions", { agent: "nobody" }, { key: "beta-test-key" });
    await eventually(
      async () => {
        const hour = hourOf(Date.now());
        const read = await tenantRpc(env, "beta").usage("beta", hour - 1, hour + 1);
        return read.ok ? read.value.hours.reduce((n, h) => n + (h.usage.counts.requests ?? 0), 0) : 0;
      },
      (n) => n >= 1,
      { what: "beta's request counted" },
    );
    const one = await op("GET", "/tenants/beta/usage?granularity=hour");
    expect(one.json.tenant).toBe("beta");
    const all = await op("GET", "/usage");
    expect(all.json.tenants.map((t: { tenant: string }) => t.tenant)).toEqual(["alpha", "beta", "delta", "gamma"]);
    const beta = all.json.tenants.find((t: { tenant: string }) => t.tenant === "beta");
    expect(beta.totals.requests).toBe(one.json.totals.requests);
    expect(beta.quotas).toHaveLength(6);
    expect((await op("GET", "/usage?granularity=week")).status).toBe(400);
  });
});
