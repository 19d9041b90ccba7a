import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Ask } from "../../src/quotas/admission";
import { hourOf } from "../../src/quotas/windows";
import { tenantRpc } from "../../src/rpc/stubs";
import type { QuotaOverrides } from "../../src/schemas/quotas";
import { admit, endLeases, release } from "../../src/services/admissions";
import { spyOnConsoleError } from "../console-spy";
import { eventually } from "../eventually";
import type { TenantDO } from "../worker";

/**
 * Admissions as the Worker and sessions ask for them (src/services/admissions.ts): from the
 * tenant's object, or from a lease it granted this isolate when asks come quickly. Each test
 * has a tenant of its own, and makes its asks within a lease's second of each other.
 */

const object = (tenant: string) =>
  env.TENANTS.get(env.TENANTS.idFromName(tenant)) as unknown as DurableObjectStub<TenantDO>;
const runs = async (tenant: string) => {
  const hour = hourOf(Date.now());
  const read = await tenantRpc(env, tenant).usage(tenant, hour - 1, hour + 2);
  return read.ok ? read.value.hours.reduce((n, h) => n + (h.usage.counts.runs ?? 0), 0) : -1;
};

let n = 0;
/** A tenant of its own with `limits`, its object's clock pinned at `at` (windows stay put). */
async function tenant(limits: QuotaOverrides, at?: number): Promise<string> {
  const name = `adm-lease-${++n}`;
  if (at !== undefined) await runInDurableObject(object(name), (instance: TenantDO) => instance.clock.pin(at));
  await tenantRpc(env, name).setOverrides(name, limits);
  return name;
}

/** How many times the tenant's object was asked to admit. */
const calls = (name: string) => runInDurableObject(object(name), (instance: TenantDO) => instance.admits);

/** What the object has counted, leases granted included (the windows are checked against this). */
const stored = (name: string) =>
  runInDurableObject(object(name), (_: TenantDO, state) => {
    const row = state.storage.sql
      .exec<{ sessions: number | null; runs: number | null }>(
        "SELECT SUM(sessions) AS sessions, SUM(runs) AS runs FROM usage",
      )
      .one();
    return { sessions: row.sessions ?? 0, runs: row.runs ?? 0 };
  });

/** The tenant's usage as its reports read it: the hours' counts and the windows now (`at`: its object's clock). */
async function usage(name: string, at = Date.now()) {
  const hour = hourOf(at);
  const read = await tenantRpc(env, name).usage(name, hour - 48, hour + 48);
  if (!read.ok) throw new Error(read.error.message);
  const sum = (counter: "sessions" | "runs") =>
    read.value.hours.reduce((n, h) => n + (h.usage.counts[counter] ?? 0), 0);
  return { sessions: sum("sessions"), runs: sum("runs"), windows: read.value.windows };
}

/** `count` asks one after another. */
async function inTurn(name: string, ask: Ask, count: number) {
  const admitted = [];
  for (let i = 0; i < count; i++) {
    const result = await admit(env, name, ask);
    if (!result.ok) throw new Error(result.error.message);
    admitted.push(result.value);
  }
  return admitted;
}

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

describe("leases", () => {
  it("a burst of 300 under a limit of 200 admits exactly 200, mostly from leases; usage is what was admitted", async () => {
    const name = await tenant({ sessions_per_day: 200 });
    const results = await Promise.all(Array.from({ length: 300 }, () => admit(env, name, { sessions: true })));
    const admitted = results.filter((r) => r.ok);
    expect(admitted).toHaveLength(200);
    expect(results.filter((r) => !r.ok && r.error.code === "QUOTA_EXCEEDED")).toHaveLength(100);
    const leased = admitted.filter((r) => r.value.lease !== undefined).length;
    expect(leased).toBeGreaterThan(100);
    // Every ask not given out from a lease is a call (an ask refused may then take from one).
    expect(await calls(name)).toBeLessThan(200);
    const after = await eventually(
      () => usage(name),
      (u) => u.sessions === 200,
      { what: "usage of the 200 admitted" },
    );
    expect(after.windows.sessions_today).toBe(200);
    expect(await stored(name)).toMatchObject({ sessions: 200 });
  });

  it("a burst of runs under the minute's limit admits exactly the limit", async () => {
    const at = Date.parse("2026-03-04T10:20:30.000Z");
    const name = await tenant({ runs_per_minute: 200 }, at);
    const results = await Promise.all(Array.from({ length: 300 }, () => admit(env, name, { runs: true })));
    expect(results.filter((r) => r.ok)).toHaveLength(200);
    expect(results.filter((r) => r.ok && r.value.lease !== undefined).length).toBeGreaterThan(0);
    expect(results.filter((r) => !r.ok).map((r) => !r.ok && r.error.details)).toEqual(
      Array(100).fill(expect.objectContaining({ limit: "runs_per_minute", retry_after_s: 30 })),
    );
    await eventually(
      () => usage(name, at),
      (u) => u.runs === 200 && u.windows.runs_this_minute === 200,
      { what: "usage of the 200 runs admitted" },
    );
  });

  it("a tenant near its limit gets no lease: each ask is the object's, as without leases", async () => {
    const name = await tenant({ sessions_per_day: 3 });
    const results = await Promise.all(Array.from({ length: 10 }, () => admit(env, name, { sessions: true })));
    expect(results.filter((r) => r.ok)).toHaveLength(3);
    expect(results.filter((r) => r.ok && r.value.lease !== undefined)).toHaveLength(0);
    expect(await calls(name)).toBe(10);
    expect(await stored(name)).toMatchObject({ sessions: 3 });
    // An eighth of what is left after the ask: 7 left, none; 8 left, one.
    const near = await tenant({ sessions_per_day: 9 });
    await inTurn(near, { sessions: true }, 2);
    expect(await stored(near)).toMatchObject({ sessions: 2 });
    const further = await tenant({ sessions_per_day: 10 });
    await inTurn(further, { sessions: true }, 2);
    expect(await stored(further)).toMatchObject({ sessions: 3 });
  });

  it("usage leaves out what a lease has not given out", async () => {
    const name = await tenant({});
    await inTurn(name, { sessions: true }, 2);
    // The second ask came with a lease of one more: counted, but not in the usage.
    expect(await stored(name)).toMatchObject({ sessions: 3 });
    const read = await usage(name);
    expect(read.sessions).toBe(2);
    expect(read.windows.sessions_today).toBe(2);
  });

  it("hands back what a lease did not give out when it ends: usage and the window return", async () => {
    const name = await tenant({ sessions_per_day: 100 });
    await inTurn(name, { sessions: true }, 10);
    expect(await calls(name)).toBeLessThan(10);
    await eventually(
      () => usage(name),
      (u) => u.sessions === 10,
      { what: "the lease's unused admissions handed back" },
    );
    expect(await stored(name)).toMatchObject({ sessions: 10 });
    // The window counts the 10 admitted: 90 more, straight from the object, then refused.
    const rpc = tenantRpc(env, name);
    for (let i = 0; i < 90; i++) expect((await rpc.admit(name, { sessions: true })).ok).toBe(true);
    expect((await rpc.admit(name, { sessions: true })).ok).toBe(false);
  });

  it("takes a released leased admission back into the lease, while it is good", async () => {
    const name = await tenant({});
    // The fourth ask asks for a lease of three: the fifth is given out from it.
    await inTurn(name, { sessions: true }, 4);
    const [fifth] = await inTurn(name, { sessions: true }, 1);
    expect(fifth?.lease).toBeDefined();
    const before = { calls: await calls(name), stored: await stored(name) };
    await release(env, name, fifth!);
    expect(await stored(name)).toEqual(before.stored);
    // Back in the lease: the next three are given out without asking.
    const next = await inTurn(name, { sessions: true }, 3);
    expect(next.every((a) => a.lease === fifth!.lease)).toBe(true);
    expect(await calls(name)).toBe(before.calls);
    // Seven given out, all it held: the lease ended. It takes nothing back: the release is the object's.
    await eventually(
      () => usage(name),
      (u) => u.sessions === 7,
      { what: "the lease ended" },
    );
    expect(await stored(name)).toMatchObject({ sessions: 7 });
    await release(env, name, next[0]!);
    expect(await stored(name)).toMatchObject({ sessions: 6 });
  });

  it("ends this isolate's leases when the tenant's limits change", async () => {
    const name = await tenant({});
    await inTurn(name, { runs: true }, 4);
    const asked = await calls(name);
    endLeases(env, name);
    await inTurn(name, { runs: true }, 1);
    expect(await calls(name)).toBe(asked + 1);
    await eventually(
      () => usage(name),
      (u) => u.runs === 5,
      { what: "the ended lease handed back" },
    );
  });
});
