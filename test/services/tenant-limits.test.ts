import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { limitsFromVars } from "../../src/quotas/limits";
import { hourOf } from "../../src/quotas/windows";
import { tenantRpc } from "../../src/rpc/stubs";
import { tenantLimits } from "../../src/services/tenant-limits";
import { call } from "../api/helpers";
import { spyOnConsoleError } from "../console-spy";
import { eventually } from "../eventually";
import type { TenantDO } from "../worker";

/**
 * The isolate's copy of a tenant's limits (src/services/tenant-limits.ts): read once and then
 * held; when the tenant's object does not answer, the API stays up on the deployment's
 * defaults and asks again a few seconds later.
 */

const object = (tenant: string) =>
  env.TENANTS.get(env.TENANTS.idFromName(tenant)) as unknown as DurableObjectStub<TenantDO>;
const reads = (tenant: string) => runInDurableObject(object(tenant), (instance: TenantDO) => instance.limitReads);

describe("tenantLimits", () => {
  it("reads a tenant's limits from its object once, then holds them", async () => {
    await tenantRpc(env, "alpha").setOverrides("alpha", { tools: 7 });
    const before = await reads("alpha");
    expect((await tenantLimits(env, "alpha")).limits.tools).toBe(7);
    expect((await tenantLimits(env, "alpha")).limits.tools).toBe(7);
    expect(await reads("alpha")).toBe(before + 1);
  });

  it("stands in the deployment's defaults when the object does not answer, and the API stays up", async () => {
    const logged = spyOnConsoleError();
    await tenantRpc(env, "beta").setOverrides("beta", { requests_per_minute: 3 });
    await runInDurableObject(object("beta"), (instance: TenantDO) => instance.setUnreachable(true));
    const before = await reads("beta");
    const limits = await tenantLimits(env, "beta");
    expect(limits.limits).toEqual(limitsFromVars(env).limits);
    expect(Object.values(limits.sources)).toEqual(Array(6).fill("default"));
    // On the default tier, not beta's 3: the fourth request goes through.
    for (let i = 0; i < 4; i++)
      expect((await call("GET", "/v1/agents", undefined, { key: "beta-test-key" })).status).toBe(200);
    // Asked once; the stand-in holds for a few seconds rather than a call a request.
    expect(await reads("beta")).toBe(before + 1);
    expect(logged).toHaveBeenCalledWith(expect.stringMatching(/^limits of 'beta' not read \(DEPENDENCY_UNAVAILABLE\)/));
    // The usage it could not hand over is kept, and goes with the next count once the object answers.
    await eventually(
      async () => logged.mock.calls.some(([line]) => /^usage of 'beta' not recorded/.test(String(line))),
      (seen) => seen,
      { what: "the usage flush refused" },
    );
    await runInDurableObject(object("beta"), (instance: TenantDO) => instance.setUnreachable(false));
    await call("GET", "/v1/agents", undefined, { key: "beta-test-key" });
    const hour = hourOf(Date.now());
    await eventually(
      async () => {
        const read = await tenantRpc(env, "beta").usage("beta", hour - 1, hour + 1);
        return read.ok ? read.value.hours.reduce((n, h) => n + (h.usage.counts.requests ?? 0), 0) : 0;
      },
      (n) => n === 5,
      { what: "the five requests counted after all" },
    );
  });
});
