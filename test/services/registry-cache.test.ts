import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { unwrap } from "../../src/errors";
import type { RegistryHead } from "../../src/registry/store";
import { heldRouters, routerBudget, shardBytes } from "../../src/routing/router-budget";
import { routerRpc } from "../../src/rpc/stubs";
import {
  agentDirectory,
  HEAD_TTL_MS,
  holdsRouter,
  invalidateTenant,
  knownDirectory,
  routerAt,
  routerFor,
  tenantHead,
} from "../../src/services/registry-cache";
import { routeInput } from "../../src/services/routing";
import { eventually } from "../eventually";
import { team } from "../routing/router-fixtures";

const T = Date.UTC(2026, 0, 1);
let counter = 0;

/** A tenant of its own per test, at registry version 1; `bump` is a write made in another isolate (D1 only). */
async function tenantAtVersion1() {
  const tenant = `cache-${++counter}`;
  await env.DB.prepare("INSERT INTO registry_versions (tenant, version, stamp) VALUES (?1, 1, 'first')")
    .bind(tenant)
    .run();
  const bump = () =>
    env.DB.prepare("UPDATE registry_versions SET version = version + 1, stamp = 'elsewhere' WHERE tenant = ?1")
      .bind(tenant)
      .run();
  const version = async (now: number) => (await tenantHead(env.DB, tenant, now)).head.version;
  return { tenant, bump, version };
}

describe("registry head cache", () => {
  it(`trusts the head it read for ${HEAD_TTL_MS} ms, then reads D1 again`, async () => {
    const { bump, version } = await tenantAtVersion1();
    expect(await version(T)).toBe(1);
    await bump();
    expect(await version(T + HEAD_TTL_MS - 1)).toBe(1);
    expect(await version(T + HEAD_TTL_MS)).toBe(2);
  });

  it("reads D1 again at once after invalidateTenant (a write through this isolate)", async () => {
    const { tenant, bump, version } = await tenantAtVersion1();
    expect(await version(T)).toBe(1);
    await bump();
    invalidateTenant(tenant);
    expect(await version(T + 1)).toBe(2);
  });

  it("answers version 0 for a tenant that never wrote", async () => {
    expect((await tenantHead(env.DB, "cache-never-wrote", T)).head).toEqual({ version: 0, stamp: "" });
  });
});

describe("the directory known without a read", () => {
  it("is the one loaded at the head read within the TTL; unknown before, after the TTL, and at a newer head", async () => {
    const { tenant, bump } = await tenantAtVersion1();
    const now = Date.now();
    expect(knownDirectory(tenant, now)).toBeNull();
    const loaded = await agentDirectory(env.DB, tenant);
    expect(knownDirectory(tenant, now)).toBe(loaded);
    expect(knownDirectory(tenant, now + 10 * HEAD_TTL_MS)).toBeNull();
    await bump();
    invalidateTenant(tenant);
    await tenantHead(env.DB, tenant);
    expect(knownDirectory(tenant)).toBeNull();
  });
});

describe("a route while the isolate holds no router", () => {
  it("is decided by the router object (naming its version); the isolate loads the version meanwhile and routes alike", async () => {
    const tenant = `cache-route-${++counter}`;
    for (const agent of team) unwrap(await routerRpc(env, tenant).putAgent(tenant, agent));
    const { head } = await tenantHead(env.DB, tenant, Date.now());
    const loads: Promise<unknown>[] = [];
    const needs = { decide: true, threshold: 80 };
    const input = "I want a refund for my order";
    const first = await routerFor(env, tenant, head, input, needs, (work) => loads.push(work));
    expect(first.source).toBe("object");
    expect(first.version).toBe(head.version);
    expect(loads).toHaveLength(1);
    await Promise.all(loads);
    const next = await routerFor(env, tenant, head, input, needs);
    expect(next.source).toBe("isolate");
    expect(next.version).toBe(head.version);
    const plain = (value: unknown) => JSON.parse(JSON.stringify(value));
    expect(plain(await first.rules.decideInTurns(input))).toEqual(plain(await next.rules.decideInTurns(input)));
    expect(first.agents.map((a) => a.name)).toEqual(["billing"]);
    expect(first.byName.get("billing")?.description).toBe(next.byName.get("billing")?.description);
  });
});

describe("a route answered by a warm router object", () => {
  it.each([
    ["prompt_user", "the enabled agents' summaries"],
    ["none", "no agents"],
    ["default_agent", "every agent"],
  ] as const)(
    "routes as the isolate's router does, with fallback %s (the object lists %s)",
    async (fallback, _lists) => {
      const tenant = `cache-warm-${++counter}`;
      for (const agent of team) unwrap(await routerRpc(env, tenant).putAgent(tenant, agent));
      const { head } = await tenantHead(env.DB, tenant, Date.now());
      // The object loads the version it keeps after the build: wait until it holds it.
      await eventually(
        async () => unwrap(await routerRpc(env, tenant).memory()).version,
        (version) => version === head.version,
        { what: "the router object holding the head's version" },
      );
      expect(unwrap(await routerRpc(env, tenant).memory()).version).toBe(head.version);
      const loads: Promise<unknown>[] = [];
      const options = {
        strategy: "rule" as const,
        config: { fallback, default_agent: "sales" },
        background: (work: Promise<unknown>) => loads.push(work),
      };
      const unsure = "hello there, anyone?";
      const first = await routeInput(env, tenant, unsure, options);
      expect(first.registry.source).toBe("object");
      await Promise.all(loads);
      const next = await routeInput(env, tenant, unsure, options);
      expect(next.registry.source).toBe("isolate");
      // Timings differ between the two routes; the decision must not.
      const decided = (d: typeof first) => {
        const { latency_us: _latency, rule_us: _rule, ...decision } = d.decision;
        return decision;
      };
      expect(decided(first)).toEqual(decided(next));
      expect(first.decision.method).toBe(fallback === "none" ? "none" : "fallback");
    },
  );
});

describe("the isolate's router budget", () => {
  /** A tenant with the test team, and a route that loads its router (awaited) in an isolate of `budgetMB`. */
  async function tenantWithTeam(prefix: string) {
    const tenant = `${prefix}-${++counter}`;
    for (const agent of team) unwrap(await routerRpc(env, tenant).putAgent(tenant, agent));
    const { head } = await tenantHead(env.DB, tenant, Date.now());
    return { tenant, head };
  }
  const needs = { decide: true, threshold: 80 };
  const input = "I want a refund for my order";
  const plain = (value: unknown) => JSON.parse(JSON.stringify(value));

  async function route(budget: typeof env, tenant: string, head: RegistryHead) {
    const loads: Promise<unknown>[] = [];
    const registry = await routerFor(budget, tenant, head, input, needs, (work) => loads.push(work));
    // The loads this route started (a load's own pieces join later).
    const started = loads.length;
    const decision = plain(await registry.rules.decideInTurns(input));
    await Promise.all(loads);
    await Promise.all(loads);
    return { registry, decision, loads: started };
  }

  it("lets go of the least recently used tenant's router; its next route reloads it and decides the same", async () => {
    const a = await tenantWithTeam("budget-a");
    const b = await tenantWithTeam("budget-b");
    const loaded = await routerAt(env, a.tenant, a.head, undefined, true);
    const size = loaded.shards.reduce((sum, s) => sum + shardBytes(s.wrapped), 0);
    // Room for one router like these, not two: holding one lets go of every other.
    const small = { ...env, RELAY_ROUTER_BUDGET_MB: String((1.5 * size) / 1e6) };
    const first = await route(small, a.tenant, a.head);
    expect(first.registry.source).toBe("isolate");
    expect(holdsRouter(a.tenant, loaded)).toBe(true);

    await route(small, b.tenant, b.head);
    const heldB = await routerAt(small, b.tenant, b.head);
    expect(holdsRouter(b.tenant, heldB)).toBe(true);
    expect(holdsRouter(a.tenant, loaded)).toBe(false);
    expect(heldRouters().bytes).toBeLessThanOrEqual(routerBudget(small));

    // A's next route is answered by the router object while the isolate loads A's router again.
    const again = await route(small, a.tenant, a.head);
    expect(again.registry.source).toBe("object");
    expect(again.loads).toBe(1);
    expect(again.decision).toEqual(first.decision);
    const reloaded = await route(small, a.tenant, a.head);
    expect(reloaded.registry.source).toBe("isolate");
    expect(reloaded.decision).toEqual(first.decision);
    expect(heldRouters().bytes).toBeLessThanOrEqual(routerBudget(small));
  });

  it("serves a router bigger than the whole budget from the router object, without holding or reloading it", async () => {
    const c = await tenantWithTeam("budget-c");
    const tiny = { ...env, RELAY_ROUTER_BUDGET_MB: "0.001" };
    const first = await route(tiny, c.tenant, c.head);
    expect(first.registry.source).toBe("object");
    expect(first.loads).toBe(1);
    // The load found it past the budget: the next routes ask the object and load nothing.
    for (let i = 0; i < 2; i++) {
      const next = await route(tiny, c.tenant, c.head);
      expect(next.registry.source).toBe("object");
      expect(next.loads).toBe(0);
      expect(next.decision).toEqual(first.decision);
    }
  });
});
