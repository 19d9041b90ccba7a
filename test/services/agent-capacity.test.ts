import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { decodeShardLease, shardObjectName, shardOrder, shardPlan } from "../../src/handoff/capacity-shards";
import type { AgentLoad } from "../../src/rpc/agent";
import { agentRpc, agentRpcByName } from "../../src/rpc/stubs";
import { agentCapacity, agentLoad, setAgentStatus } from "../../src/services/agent-capacity";
import type { AgentDO } from "../worker";

const TTL = 30_000;
const TENANT = "alpha";
let counter = 0;
/** A fresh agent name per test: storage is shared by the whole file. */
const freshAgent = () => `sharded-${++counter}`;

function value<T>(result: { ok: true; value: T } | { ok: false; error: { code: string; message: string } }): T {
  if (!result.ok) throw new Error(`${result.error.code}: ${result.error.message}`);
  return result.value;
}

/** Each shard's load, read from its own object. */
async function shardLoads(agent: string, shards: number): Promise<AgentLoad[]> {
  return Promise.all(
    Array.from({ length: shards }, async (_, i) =>
      value(await agentRpcByName(env, shardObjectName(TENANT, agent, i, shards), `shard ${i}`).load()),
    ),
  );
}

/** A session id whose home shard (of `shards`) is `home`. */
function sessionAt(home: number, shards: number, tag: string): string {
  for (let i = 0; ; i++) if (shardOrder(`${tag}-${i}`, shards)[0] === home) return `${tag}-${i}`;
}

describe("agent capacity over shards", () => {
  it("holds the limit exactly under 200 parallel acquires across 6 shards", async () => {
    const agent = freshAgent();
    const capacity = agentCapacity(env, TENANT, agent, 150, 25);
    expect(capacity.plan).toEqual({ shards: 6, slices: [25, 25, 25, 25, 25, 25] });

    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => capacity.acquire(`par-${i}`, `h-${i}`, TTL)),
    );
    const granted = results.flatMap((r) => (r.ok ? [r.value] : []));
    const refused = results.flatMap((r) => (r.ok ? [] : [r.error]));
    expect(granted).toHaveLength(150);
    expect(refused).toHaveLength(50);
    for (const error of refused) {
      expect(error).toMatchObject({
        code: "AGENT_UNAVAILABLE",
        details: { reason: "at_capacity", active: 150, capacity: 150, shards: 6 },
      });
    }
    expect(new Set(granted.map((l) => l.lease_id)).size).toBe(150);
    expect(granted.every((l) => decodeShardLease(l.lease_id).shards === 6)).toBe(true);

    const loads = await shardLoads(agent, 6);
    for (const load of loads) {
      expect(load.active_leases).toBeLessThanOrEqual(25);
      expect(load.max_concurrent_sessions).toBe(25);
    }
    expect(loads.reduce((n, l) => n + l.active_leases, 0)).toBe(150);
    expect(value(await agentLoad(env, TENANT, agent, 150, 25))).toMatchObject({
      status: "active",
      max_concurrent_sessions: 150,
      active_leases: 150,
    });

    // Ten released (spread over whatever shards they sit at), twenty more asking: exactly ten granted.
    const freed = await Promise.all(granted.slice(0, 10).map((l) => capacity.release({ lease_id: l.lease_id })));
    expect(freed.every((r) => r.ok && r.value.released)).toBe(true);
    const more = await Promise.all(Array.from({ length: 20 }, (_, i) => capacity.acquire(`more-${i}`, `hm-${i}`, TTL)));
    expect(more.filter((r) => r.ok)).toHaveLength(10);
    expect(more.filter((r) => !r.ok && r.error.code === "AGENT_UNAVAILABLE")).toHaveLength(10);
    const after = await shardLoads(agent, 6);
    expect(after.map((l) => l.active_leases)).toEqual([25, 25, 25, 25, 25, 25]);
  });

  it("spills a session over to the next shard when its home is full; confirm and release reach that shard", async () => {
    const agent = freshAgent();
    const capacity = agentCapacity(env, TENANT, agent, 4, 1);
    const home = 2;
    const first = value(await capacity.acquire(sessionAt(home, 4, "first"), "h1", TTL));
    expect(decodeShardLease(first.lease_id)).toMatchObject({ shard: home, shards: 4 });

    const spilled = sessionAt(home, 4, "second");
    const lease = value(await capacity.acquire(spilled, "h2", TTL));
    expect(decodeShardLease(lease.lease_id)).toMatchObject({ shard: 3, shards: 4 });
    expect(lease).toMatchObject({ session_id: spilled, state: "tentative" });
    // The same session and handoff again: the same lease (its home is still full).
    expect(value(await capacity.acquire(spilled, "h2", TTL))).toEqual(lease);

    const held = value(await capacity.confirm(lease.lease_id, lease.fencing_token));
    expect(held).toMatchObject({ lease_id: lease.lease_id, state: "held", expires_at: null });
    expect((await shardLoads(agent, 4)).map((l) => l.active_leases)).toEqual([0, 0, 1, 1]);
    expect((await shardLoads(agent, 4))[3]!.leases).toMatchObject([{ session_id: spilled, state: "held" }]);

    expect(value(await capacity.release({ lease_id: lease.lease_id }, lease.fencing_token))).toEqual({
      released: true,
    });
    expect(value(await capacity.release({ lease_id: lease.lease_id }))).toEqual({ released: false });
    expect((await shardLoads(agent, 4)).map((l) => l.active_leases)).toEqual([0, 0, 1, 0]);
    const gone = await capacity.confirm(lease.lease_id);
    expect(gone).toMatchObject({
      ok: false,
      error: { code: "AGENT_UNAVAILABLE", details: { reason: "lease_not_found", lease_id: lease.lease_id } },
    });
  });

  it("re-takes a lease at the shard named by `prefer`, not a second one at the home shard", async () => {
    const agent = freshAgent();
    const capacity = agentCapacity(env, TENANT, agent, 4, 1);
    value(await capacity.acquire(sessionAt(1, 4, "blocker"), "h1", TTL));
    const session = sessionAt(1, 4, "mover");
    const lease = value(await capacity.acquire(session, "h2", TTL));
    expect(decodeShardLease(lease.lease_id).shard).toBe(2);
    value(await capacity.release({ session_id: sessionAt(1, 4, "blocker") }));
    // The home has room again; a new handoff of the same session, preferring its lease's shard, takes that lease over.
    const again = value(await capacity.acquire(session, "h3", TTL, lease.lease_id));
    expect(again.lease_id).toBe(lease.lease_id);
    expect(again.fencing_token).toBeGreaterThan(lease.fencing_token);
    expect((await shardLoads(agent, 4)).map((l) => l.active_leases)).toEqual([0, 0, 1, 0]);
  });

  it("a pause reaches every shard and every acquire is refused as paused; resume reopens them", async () => {
    const agent = freshAgent();
    const capacity = agentCapacity(env, TENANT, agent, 150, 25);
    const kept = value(await capacity.acquire("kept", "h0", TTL));
    const paused = value(await setAgentStatus(env, TENANT, agent, 150, "paused", 25));
    expect(paused).toMatchObject({ status: "paused", active_leases: 1, leases: [{ lease_id: kept.lease_id }] });
    expect((await shardLoads(agent, 6)).map((l) => l.status)).toEqual(Array(6).fill("paused"));

    const refused = await Promise.all(
      Array.from({ length: 12 }, (_, i) => capacity.acquire(`paused-${i}`, `h-${i}`, TTL)),
    );
    for (const r of refused)
      expect(r).toMatchObject({ ok: false, error: { code: "AGENT_UNAVAILABLE", details: { reason: "paused" } } });
    // A session already holding a lease keeps it, as on one object.
    expect(value(await capacity.acquire("kept", "h1", TTL)).lease_id).toBe(kept.lease_id);

    expect(value(await setAgentStatus(env, TENANT, agent, 150, "active", 25)).status).toBe("active");
    expect((await shardLoads(agent, 6)).map((l) => l.status)).toEqual(Array(6).fill("active"));
    expect((await capacity.acquire("paused-0", "h-0", TTL)).ok).toBe(true);
  });

  it("releases by session wherever the session's lease is", async () => {
    const agent = freshAgent();
    const capacity = agentCapacity(env, TENANT, agent, 3, 1);
    const home = 0;
    value(await capacity.acquire(sessionAt(home, 3, "full"), "h1", TTL));
    const session = sessionAt(home, 3, "elsewhere");
    const lease = value(await capacity.acquire(session, "h2", TTL));
    expect(decodeShardLease(lease.lease_id).shard).not.toBe(home);
    expect(value(await capacity.release({ session_id: session }))).toEqual({ released: true });
    expect(value(await capacity.release({ session_id: session }))).toEqual({ released: false });
    expect((await shardLoads(agent, 3)).map((l) => l.active_leases)).toEqual([1, 0, 0]);
    // Capacity unknown (a queued release without a lease id): every possible plan's objects are visited.
    const again = value(await capacity.acquire(session, "h3", TTL));
    expect(value(await agentCapacity(env, TENANT, agent, null).release({ session_id: session }))).toEqual({
      released: true,
    });
    expect(decodeShardLease(again.lease_id).shards).toBe(3);
    expect((await shardLoads(agent, 3)).map((l) => l.active_leases)).toEqual([1, 0, 0]);
  });

  it("skips a shard that does not answer: the session is placed on another, and with no other room that is the answer", async () => {
    const agent = freshAgent();
    const capacity = agentCapacity(env, TENANT, agent, 2, 1);
    const shard0 = env.AGENTS.get(
      env.AGENTS.idFromName(shardObjectName(TENANT, agent, 0, 2)),
    ) as unknown as DurableObjectStub<AgentDO>;
    await shard0.setUnreachable(true);
    const placed = value(await capacity.acquire(sessionAt(0, 2, "homeless"), "h1", TTL));
    expect(decodeShardLease(placed.lease_id)).toMatchObject({ shard: 1, shards: 2 });
    // Shard 1 is full now, shard 0 still silent: the caller learns the agent is out of reach, not full.
    expect(await capacity.acquire(sessionAt(0, 2, "late"), "h2", TTL)).toMatchObject({
      ok: false,
      error: { code: "DEPENDENCY_UNAVAILABLE" },
    });
    // Back, its slice is there again.
    await shard0.setUnreachable(false);
    expect(decodeShardLease(value(await capacity.acquire(sessionAt(0, 2, "later"), "h3", TTL)).lease_id)).toMatchObject(
      { shard: 0 },
    );
  });

  it("after a capacity change across a shard boundary, a lease of the old plan is still released where it lives", async () => {
    const agent = freshAgent();
    const before = agentCapacity(env, TENANT, agent, 1, 1);
    const old = value(await before.acquire("kept", "h1", TTL));
    const after = agentCapacity(env, TENANT, agent, 4, 2);
    expect(after.plan?.shards).toBe(2);
    // The new plan does not count the old lease (the documented excess, at most the old leases)...
    expect(
      (await Promise.all(["n1", "n2", "n3", "n4", "n5"].map((s, i) => after.acquire(s, `n${i}`, TTL)))).filter(
        (r) => r.ok,
      ),
    ).toHaveLength(4);
    // ...and the old lease, named by its id, is released from the old object.
    expect(value(await after.release({ lease_id: old.lease_id }))).toEqual({ released: true });
    expect(value(await agentRpc(env, TENANT, agent).load()).active_leases).toBe(0);
  });

  it("an agent of one slice uses its original object, with unchanged lease ids", async () => {
    const agent = freshAgent();
    const capacity = agentCapacity(env, TENANT, agent, 2);
    expect(capacity.plan).toEqual(shardPlan(2));
    const lease = value(await capacity.acquire("one", "h1", TTL));
    expect(lease.lease_id).toMatch(/^lse_[0-9A-Z]+$/);
    const direct = agentRpc(env, TENANT, agent);
    expect(value(await direct.load()).leases).toMatchObject([{ lease_id: lease.lease_id, session_id: "one" }]);
    value(await direct.confirm(lease.lease_id, lease.fencing_token));
    value(await capacity.acquire("two", "h2", TTL));
    // One shard: its own refusal, word for word.
    expect(await capacity.acquire("three", "h3", TTL)).toMatchObject({
      ok: false,
      error: {
        code: "AGENT_UNAVAILABLE",
        message: "The agent is at its capacity of 2 sessions.",
        details: { reason: "at_capacity", active: 2, capacity: 2 },
      },
    });
    expect(value(await setAgentStatus(env, TENANT, agent, 2, "paused"))).toMatchObject({
      status: "paused",
      max_concurrent_sessions: 2,
      active_leases: 2,
    });
    expect(value(await direct.load()).status).toBe("paused");
    expect(value(await setAgentStatus(env, TENANT, agent, null, "active")).status).toBe("active");
  });

  it("refuses an acquire without a capacity", async () => {
    expect(await agentCapacity(env, TENANT, freshAgent(), null).acquire("s", "h", TTL)).toMatchObject({
      ok: false,
      error: { code: "VALIDATION_FAILED" },
    });
  });
});
