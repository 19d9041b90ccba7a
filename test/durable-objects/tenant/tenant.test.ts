import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hourOf } from "../../../src/quotas/windows";
import { tenantRpc } from "../../../src/rpc/stubs";
import { RECENT_RUNS_MS, type TenantRpc } from "../../../src/rpc/tenant";
import { counted, modelCall } from "../../../src/usage/counts";
import type { TenantDO } from "../../worker";

/**
 * The tenant object (durable-objects/tenant/tenant.ts): admissions against the tenant's
 * quotas in one synchronous step, usage by the hour, the operator's overrides. Its clock is
 * pinned so windows and Retry-After are exact. Each test uses a tenant of its own.
 */

const T0 = Date.parse("2026-03-04T10:20:30.000Z");
let n = 0;

async function tenant(at = T0): Promise<{ name: string; rpc: TenantRpc; stub: DurableObjectStub<TenantDO> }> {
  const name = `t${++n}`;
  const stub = env.TENANTS.get(env.TENANTS.idFromName(name)) as unknown as DurableObjectStub<TenantDO>;
  await runInDurableObject(stub, (instance: TenantDO) => instance.clock.pin(at));
  return { name, rpc: tenantRpc(env, name), stub };
}

const move = (stub: DurableObjectStub<TenantDO>, ms: number) =>
  runInDurableObject(stub, (instance: TenantDO) => instance.clock.advance(ms));

/** The usage table as stored: what a refusal must leave as it was. */
const rows = (stub: DurableObjectStub<TenantDO>) =>
  runInDurableObject(stub, (_: TenantDO, state) =>
    state.storage.sql.exec("SELECT * FROM usage ORDER BY hour").toArray(),
  );

describe("admissions", () => {
  it("counts sessions up to the day's limit, then refuses until midnight UTC and writes nothing", async () => {
    const { name, rpc, stub } = await tenant();
    await rpc.setOverrides(name, { sessions_per_day: 2 });
    expect((await rpc.admit(name, { sessions: true })).ok).toBe(true);
    expect((await rpc.admit(name, { sessions: true })).ok).toBe(true);
    const before = await rows(stub);
    const refused = await rpc.admit(name, { sessions: true });
    expect(refused).toEqual({
      ok: false,
      error: {
        code: "QUOTA_EXCEEDED",
        message: expect.stringContaining("sessions_per_day"),
        details: {
          limit: "sessions_per_day",
          value: 2,
          used: 2,
          window: "day",
          retry_after_s: 13 * 3600 + 39 * 60 + 30,
          resets_at: "2026-03-05T00:00:00.000Z",
        },
      },
    });
    expect(await rows(stub)).toEqual(before);
    // An hour later the same day, still refused; the next day, admitted.
    await move(stub, 3_600_000);
    expect((await rpc.admit(name, { sessions: true })).ok).toBe(false);
    await move(stub, 13 * 3_600_000);
    expect((await rpc.admit(name, { sessions: true })).ok).toBe(true);
  });

  it("counts runs per minute, frees them with the next minute, and takes back a released one", async () => {
    const { name, rpc, stub } = await tenant();
    await rpc.setOverrides(name, { runs_per_minute: 2 });
    const first = await rpc.admit(name, { runs: true });
    await rpc.admit(name, { runs: true });
    const refused = await rpc.admit(name, { runs: true });
    expect(!refused.ok && refused.error.details).toMatchObject({ limit: "runs_per_minute", retry_after_s: 30 });
    if (!first.ok) throw new Error("not admitted");
    expect(await rpc.release(name, first.value)).toEqual({ ok: true, value: { released: true } });
    expect((await rpc.admit(name, { runs: true })).ok).toBe(true);
    await move(stub, 30_000);
    expect((await rpc.admit(name, { runs: true })).ok).toBe(true);
    const usage = await rpc.usage(name, hourOf(T0), hourOf(T0) + 1);
    expect(usage.ok && usage.value.windows.runs_this_minute).toBe(1);
    // Four admitted, one taken back.
    expect(usage.ok && usage.value.hours[0]?.usage.counts.runs).toBe(3);
  });

  it("refuses the next run once the day's tokens reach the limit, sessions still admitted", async () => {
    const { name, rpc, stub } = await tenant();
    await rpc.setOverrides(name, { model_tokens_per_day: 100 });
    await rpc.record(name, [
      { hour: hourOf(T0) - 2, usage: modelCall("openai", "m", { input: 60, output: 10 }) },
      { hour: hourOf(T0), usage: modelCall("openai", "m", { input: 20, output: 9 }) },
    ]);
    expect((await rpc.admit(name, { runs: true })).ok).toBe(true);
    await rpc.record(name, [{ hour: hourOf(T0), usage: modelCall("openai", "m", { input: 1, output: 0 }) }]);
    const refused = await rpc.admit(name, { runs: true });
    expect(!refused.ok && refused.error.details).toMatchObject({ limit: "model_tokens_per_day", used: 100 });
    // A new conversation asks for both: refused whole, nothing counted.
    const both = await rpc.admit(name, { sessions: true, runs: true });
    expect(both.ok).toBe(false);
    expect((await rpc.admit(name, { sessions: true })).ok).toBe(true);
    // Yesterday's tokens do not count today.
    await move(stub, 14 * 3_600_000);
    expect((await rpc.admit(name, { runs: true })).ok).toBe(true);
  });

  it("never admits past a limit when admissions race", async () => {
    const { name, rpc } = await tenant();
    await rpc.setOverrides(name, { runs_per_minute: 5 });
    const results = await Promise.all(Array.from({ length: 20 }, () => rpc.admit(name, { runs: true })));
    expect(results.filter((r) => r.ok)).toHaveLength(5);
  });

  it("admits everything under no limit (null), and nothing under 0", async () => {
    const { name, rpc } = await tenant();
    await rpc.setOverrides(name, { sessions_per_day: null, runs_per_minute: 0 });
    for (let i = 0; i < 30; i++) expect((await rpc.admit(name, { sessions: true })).ok).toBe(true);
    expect((await rpc.admit(name, { runs: true })).ok).toBe(false);
  });
});

describe("leases", () => {
  /** Sessions as the object counted them, leases included (what its windows are checked against). */
  const stored = async (stub: DurableObjectStub<TenantDO>) =>
    (await rows(stub)).reduce((n, r) => n + Number(r.sessions ?? 0), 0);
  const sessionsUsed = async (rpc: TenantRpc, name: string) => {
    const usage = await rpc.usage(name, hourOf(T0) - 1, hourOf(T0) + 1);
    if (!usage.ok) throw new Error(usage.error.message);
    return { hours: usage.value.hours[0]?.usage.counts.sessions ?? 0, today: usage.value.windows.sessions_today };
  };

  it("grants one with an admission, counted with it; usage leaves it out; its end takes back the unused", async () => {
    const { name, rpc, stub } = await tenant();
    await rpc.setOverrides(name, { sessions_per_day: 100 });
    // 99 left after the ask: an eighth is 12, and 8 were asked for.
    const admitted = await rpc.admit(name, { sessions: true }, 8);
    if (!admitted.ok) throw new Error(admitted.error.message);
    const grant = admitted.value.grant!;
    expect(grant).toMatchObject({ count: 8, ms: 1_000, tokens: null });
    expect(await stored(stub)).toBe(9);
    expect(await sessionsUsed(rpc, name)).toEqual({ hours: 1, today: 1 });
    // Three were given out, five were not.
    const { hour, minute } = admitted.value;
    expect(await rpc.endLease(name, { id: grant.id, hour, minute, sessions: 5, runs: 0 })).toEqual({
      ok: true,
      value: { ended: true },
    });
    expect(await stored(stub)).toBe(4);
    expect(await sessionsUsed(rpc, name)).toEqual({ hours: 4, today: 4 });
  });

  it("grants none near a limit, nor when none is asked for", async () => {
    const { name, rpc, stub } = await tenant();
    await rpc.setOverrides(name, { sessions_per_day: 9, runs_per_minute: 100, model_tokens_per_day: 80 });
    for (let i = 0; i < 2; i++) {
      const plain = await rpc.admit(name, { sessions: true });
      expect(plain.ok && plain.value.grant).toBeUndefined();
    }
    // 9 - 3 = 6 left after the ask: under an eighth's worth.
    const near = await rpc.admit(name, { sessions: true }, 32);
    expect(near.ok && near.value.grant).toBeUndefined();
    expect(await stored(stub)).toBe(3);
    // Runs under a tokens limit with only an eighth of the tokens left: none either.
    await rpc.record(name, [{ hour: hourOf(T0), usage: modelCall("openai", "m", { input: 70, output: 0 }) }]);
    const run = await rpc.admit(name, { runs: true }, 32);
    expect(run.ok && run.value.grant).toBeUndefined();
  });

  it("ends a lease of runs with the minute, and counts it in the minute's runs", async () => {
    const { name, rpc } = await tenant(Date.parse("2026-03-04T10:20:59.750Z"));
    await rpc.setOverrides(name, { runs_per_minute: 100 });
    const admitted = await rpc.admit(name, { runs: true }, 4);
    expect(admitted.ok && admitted.value.grant).toMatchObject({ count: 4, ms: 250 });
    // Five counted in the minute: 95 more, then refused.
    for (let i = 0; i < 95; i++) expect((await rpc.admit(name, { runs: true })).ok).toBe(true);
    expect((await rpc.admit(name, { runs: true })).ok).toBe(false);
  });

  it("after a restart, what an open lease holds shows as used until its end arrives", async () => {
    const { name, rpc, stub } = await tenant();
    const admitted = await rpc.admit(name, { sessions: true }, 8);
    if (!admitted.ok) throw new Error(admitted.error.message);
    await evictDurableObject(stub);
    await runInDurableObject(stub, (instance: TenantDO) => instance.clock.pin(T0));
    expect(await sessionsUsed(rpc, name)).toEqual({ hours: 9, today: 9 });
    const { hour, minute, grant } = admitted.value;
    await rpc.endLease(name, { id: grant!.id, hour, minute, sessions: 8, runs: 0 });
    expect(await sessionsUsed(rpc, name)).toEqual({ hours: 1, today: 1 });
  });
});

describe("usage", () => {
  it("adds what isolates record, hour by hour, and answers the hours asked", async () => {
    const { name, rpc } = await tenant();
    const h = hourOf(T0);
    await rpc.record(name, [
      { hour: h - 1, usage: counted({ requests: 3 }) },
      { hour: h, usage: modelCall("openai", "gpt-x", { input: 42, output: 7 }) },
    ]);
    await rpc.record(name, [{ hour: h, usage: { ...counted({ requests: 2 }), refused: { agents: 1 }, models: {} } }]);
    const usage = await rpc.usage(name, h - 1, h + 1);
    if (!usage.ok) throw new Error(usage.error.message);
    expect(usage.value.hours).toEqual([
      { hour: h - 1, usage: { counts: { requests: 3 }, refused: {}, models: {} } },
      {
        hour: h,
        usage: {
          counts: { requests: 2, model_calls: 1, input_tokens: 42, output_tokens: 7 },
          refused: { agents: 1 },
          models: { "openai\u0000gpt-x": { calls: 1, input_tokens: 42, output_tokens: 7 } },
        },
      },
    ]);
    expect(usage.value.windows).toEqual({ sessions_today: 0, runs_this_minute: 0, tokens_today: 49 });
    expect((await rpc.usage(name, h + 1, h + 5)).ok && (await rpc.usage(name, h + 1, h + 5))).toMatchObject({
      value: { hours: [] },
    });
  });

  it("keeps USAGE_RETENTION_DAYS of hours", async () => {
    const { name, rpc, stub } = await tenant();
    const h = hourOf(T0);
    await rpc.record(name, [{ hour: h - 101 * 24, usage: counted({ requests: 1 }) }]);
    // The first write of a day prunes: move to the next day and write.
    await move(stub, 24 * 3_600_000);
    await rpc.record(name, [{ hour: h + 24, usage: counted({ requests: 1 }) }]);
    expect((await rows(stub)).map((r) => r.hour)).toEqual([h + 24]);
  });

  it("answers an unknown tenant's usage without making anything", async () => {
    const { name, rpc, stub } = await tenant();
    const usage = await rpc.usage(name, 0, hourOf(T0) + 1);
    expect(usage.ok && usage.value.hours).toEqual([]);
    const tables = await runInDurableObject(stub, (_: TenantDO, state) =>
      state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table'").toArray(),
    );
    expect(tables).toEqual([]);
  });
});

describe("limits", () => {
  it("are the deployment's defaults under the tenant's overrides, each with its source", async () => {
    const { name, rpc } = await tenant();
    const before = await rpc.limits(name);
    expect(before.ok && before.value.overrides).toEqual({});
    expect(before.ok && Object.values(before.value.sources)).toEqual(Array(6).fill("default"));
    const set = await rpc.setOverrides(name, { tools: 3, agents: null });
    expect(set.ok && set.value).toMatchObject({
      overrides: { tools: 3, agents: null },
      limits: { tools: 3, agents: null },
      sources: { tools: "override", agents: "override", runs_per_minute: "default" },
    });
    const cleared = await rpc.setOverrides(name, null);
    expect(cleared.ok && cleared.value.overrides).toEqual({});
    expect(cleared.ok && cleared.value.limits).toEqual(before.ok && before.value.limits);
  });
});

describe("recent runs", () => {
  it("names the runs noted in the last RECENT_RUNS_MS, newest first; a run noted again moves; older ones are forgotten", async () => {
    const { name, rpc, stub } = await tenant();
    expect(await rpc.recentRuns(name)).toEqual({ ok: true, value: [] });
    const run = (n: number) => ({ run_id: `run_${n}`, session_id: `ses_${n}`, agent: "desk" });
    await rpc.noteRun(name, run(1));
    await move(stub, 1_000);
    await rpc.noteRun(name, run(2));
    const ids = async () => {
      const recent = await rpc.recentRuns(name);
      return recent.ok ? recent.value.map((r) => r.run_id) : null;
    };
    expect(await ids()).toEqual(["run_2", "run_1"]);
    await move(stub, 1_000);
    // Resumed: noted again, now the newest.
    await rpc.noteRun(name, run(1));
    expect(await ids()).toEqual(["run_1", "run_2"]);
    await move(stub, RECENT_RUNS_MS - 500);
    expect(await ids()).toEqual(["run_1"]);
    await move(stub, 1_000);
    expect(await ids()).toEqual([]);
    // A later note trims what is older than the window from storage too.
    await rpc.noteRun(name, run(3));
    const stored = await runInDurableObject(stub, (_: TenantDO, state) =>
      state.storage.sql.exec("SELECT run_id FROM recent_runs").toArray(),
    );
    expect(stored).toEqual([{ run_id: "run_3" }]);
  });
});
