import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hourOf } from "../../src/quotas/windows";
import { tenantRpc } from "../../src/rpc/stubs";
import { admit, release } from "../../src/services/admissions";
import { spyOnConsoleError } from "../console-spy";
import type { TenantDO } from "../worker";

/** Admissions as the Worker and sessions ask for them (src/services/admissions.ts). */

const object = (tenant: string) =>
  env.TENANTS.get(env.TENANTS.idFromName(tenant)) as unknown as DurableObjectStub<TenantDO>;
const runs = async (tenant: string) => {
  const hour = hourOf(Date.now());
  const read = await tenantRpc(env, tenant).usage(tenant, hour - 1, hour + 2);
  return read.ok ? read.value.hours.reduce((n, h) => n + (h.usage.counts.runs ?? 0), 0) : -1;
};

describe("release", () => {
  it("takes an admission back", async () => {
    const admission = await admit(env, "adm-a", { runs: true });
    if (!admission.ok) throw new Error(admission.error.message);
    expect(await runs("adm-a")).toBe(1);
    await release(env, "adm-a", admission.value);
    expect(await runs("adm-a")).toBe(0);
  });

  it("logs an admission the object would not take back, and throws nothing", async () => {
    const logged = spyOnConsoleError();
    const admission = await admit(env, "adm-b", { runs: true });
    if (!admission.ok) throw new Error(admission.error.message);
    await runInDurableObject(object("adm-b"), (instance: TenantDO) => instance.setUnreachable(true));
    await release(env, "adm-b", admission.value);
    expect(logged).toHaveBeenCalledWith("admission of 'adm-b' not taken back (DEPENDENCY_UNAVAILABLE)");
    await runInDurableObject(object("adm-b"), (instance: TenantDO) => instance.setUnreachable(false));
    // The count stays one too many until its window ends.
    expect(await runs("adm-b")).toBe(1);
  });
});
