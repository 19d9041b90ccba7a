import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { hourOf } from "../../src/quotas/windows";
import { tenantRpc } from "../../src/rpc/stubs";
import { requestRefusal, requestTiers } from "../../src/services/request-rate";
import wranglerToml from "../../wrangler.toml?raw";
import { call, OPERATOR_KEY } from "../api/helpers";
import { eventually } from "../eventually";

/**
 * The request limit per API key (docs/operations.md, Quotas), checked in the auth middleware
 * before anything else: the platform's Rate Limiting binding of the tenant's tier. Tenant
 * delta is on the test tier of 3 a minute and has two keys; each key has its own 3.
 */

const DELTA = "delta-test-key";
const DELTA_OTHER = "delta-other-key";

beforeAll(async () => {
  // The operator puts delta on the tier of 3 (PUT /v1/operator/tenants/delta/quotas).
  const set = await call("PUT", "/v1/operator/tenants/delta/quotas", { requests_per_minute: 3 }, { key: OPERATOR_KEY });
  if (set.status !== 200) throw new Error(JSON.stringify(set.json));
});

describe("requests per minute", () => {
  it("lets 3 requests of a key through, then refuses with 429, Retry-After and nothing done", async () => {
    for (let i = 0; i < 3; i++) expect((await call("GET", "/v1/agents", undefined, { key: DELTA })).status).toBe(200);
    const refused = await call("PUT", "/v1/agents/late", { name: "late", description: "d" }, { key: DELTA });
    expect(refused.status).toBe(429);
    expect(refused.json.error).toMatchObject({
      code: "QUOTA_EXCEEDED",
      details: { limit: "requests_per_minute", value: 3, window: "minute" },
    });
    const seconds = refused.json.error.details.retry_after_s;
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(60);
    expect(refused.headers.get("Retry-After")).toBe(String(seconds));
    // The other key has its own budget; the refused PUT wrote nothing.
    expect((await call("GET", "/v1/agents/late", undefined, { key: DELTA_OTHER })).status).toBe(404);
  });

  it("counts the requests let through and the refusals in the tenant's usage", async () => {
    const hour = hourOf(Date.now());
    const usage = await eventually(
      async () => {
        const read = await tenantRpc(env, "delta").usage("delta", hour - 1, hour + 1);
        if (!read.ok) throw new Error(read.error.message);
        return read.value.hours.reduce(
          (sum, h) => ({
            requests: sum.requests + (h.usage.counts.requests ?? 0),
            refused: sum.refused + (h.usage.refused.requests_per_minute ?? 0),
          }),
          { requests: 0, refused: 0 },
        );
      },
      (u) => u.requests === 4 && u.refused === 1,
      { what: "delta's 4 requests and 1 refusal counted" },
    );
    expect(usage).toEqual({ requests: 4, refused: 1 });
  });
});

describe("request tiers", () => {
  it("are the REQUESTS_PER_MINUTE_<n> bindings the deployment has", () => {
    expect(requestTiers(env)).toEqual([3, 300, 1200, 6000, 1_000_000]);
  });

  it("are bound in wrangler.toml each with the limit its name says, the default among them", () => {
    const bound = [
      ...wranglerToml.matchAll(
        /\[\[ratelimits\]\]\s*name = "REQUESTS_PER_MINUTE_(\d+)"\s*namespace_id = "\d+"\s*simple = \{ limit = (\d+), period = 60 \}/g,
      ),
    ].map((m) => [Number(m[1]), Number(m[2])]);
    expect(bound.length).toBe((wranglerToml.match(/\[\[ratelimits\]\]/g) ?? []).length);
    for (const [named, limit] of bound) expect(limit).toBe(named);
    const fallback = /^QUOTA_REQUESTS_PER_MINUTE = "(\d+)"$/m.exec(wranglerToml)?.[1];
    expect(bound.map(([n]) => n)).toContain(Number(fallback));
  });

  it("limit nothing at no limit, and let a tier with no binding through", async () => {
    expect(await requestRefusal(env, "x:1", null)).toBeNull();
    for (let i = 0; i < 5; i++) expect(await requestRefusal(env, "x:2", 7)).toBeNull();
  });
});
