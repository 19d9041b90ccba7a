import type { Env } from "../env";
import { type ErrorBody, err, ok, type Result } from "../errors";
import {
  decodeShardLease,
  encodeShardLease,
  everyShard,
  SHARD_SLICE,
  type ShardPlan,
  shardObjectName,
  shardOrder,
  shardPlan,
} from "../handoff/capacity-shards";
import type { AgentLoad, AgentRpc, AgentStatus, Lease, LeaseRef } from "../rpc/agent";
import { AGENT_CALL_DEADLINE_MS, agentRpcByName } from "../rpc/stubs";

/**
 * The session side of an agent's capacity when it is split over shard objects
 * (src/handoff/capacity-shards.ts; docs/handoffs.md, Capacity shards for hot agents). Same Result shapes as
 * AgentRpc; lease ids of a sharded agent carry their shard, so confirm and release go
 * straight to it. An agent under one slice has one shard: its original AgentDO, with
 * the same answers as calling that object directly.
 */

/** Leases of one agent, whatever the number of objects behind it. */
export interface AgentCapacity {
  /** The split the acquires use; null when the capacity is not known (release only). */
  readonly plan: ShardPlan | null;
  /**
   * A tentative lease from the first shard that grants one, trying the session's home
   * shard first (or `prefer`'s shard: a lease id this session held here, so a session
   * re-taking its lease lands where it already holds one). Sequential on purpose: trying
   * shards in parallel would grant several leases at once.
   */
  acquire(sessionId: string, handoffId: string, ttlMs: number, prefer?: string): Promise<Result<Lease>>;
  /** Tentative → held, at the lease's shard. */
  confirm(leaseId: string, fencingToken?: number): Promise<Result<Lease>>;
  /**
   * One lease (at its shard), or whatever the session holds at any shard of the plan (in
   * parallel). Fencing tokens are per shard object: with a session ref each shard checks
   * the token against its own lease.
   */
  release(ref: LeaseRef, fencingToken?: number): Promise<Result<{ released: boolean }>>;
}

/** One shard's object of `agent`, named for deadline errors. */
function shardRpc(
  env: Pick<Env, "AGENTS">,
  tenant: string,
  agent: string,
  shard: number,
  shards: number,
  ms: number,
): AgentRpc {
  const what = shards === 1 ? `Agent '${agent}'` : `Agent '${agent}' (shard ${shard} of ${shards})`;
  return agentRpcByName(env, shardObjectName(tenant, agent, shard, shards), what, ms);
}

/** A call that threw (an object reset, a broken connection) is an unavailable dependency. */
async function settled<T>(call: () => Promise<Result<T>>, what: string): Promise<Result<T>> {
  try {
    return await call();
  } catch (error) {
    return err("DEPENDENCY_UNAVAILABLE", `${what} could not be reached.`, { reason: String(error) });
  }
}

const reasonOf = (error: ErrorBody): unknown => (error.details as { reason?: unknown } | undefined)?.reason;
const activeOf = (error: ErrorBody): number =>
  Number((error.details as { active?: unknown } | undefined)?.active ?? 0) || 0;

/** The lease as the session sees it: its id names the shard. */
const outward = (lease: Lease, shard: number, shards: number): Lease => ({
  ...lease,
  lease_id: encodeShardLease({ lease_id: lease.lease_id, shard, shards }),
});

/**
 * `agent`'s capacity of `capacity` sessions split in slices of `slice` (null: unknown,
 * which only releases, looking at every possible plan's objects).
 */
export function agentCapacity(
  env: Pick<Env, "AGENTS">,
  tenant: string,
  agent: string,
  capacity: number | null,
  slice: number = SHARD_SLICE,
  ms: number = AGENT_CALL_DEADLINE_MS,
): AgentCapacity {
  const plan = capacity === null ? null : shardPlan(capacity, slice);
  const at = (shard: number, shards: number) => shardRpc(env, tenant, agent, shard, shards, ms);

  async function acquire(sessionId: string, handoffId: string, ttlMs: number, prefer?: string): Promise<Result<Lease>> {
    if (!plan || capacity === null)
      return err("VALIDATION_FAILED", "An acquire needs the agent's capacity.", { agent });
    let order = shardOrder(sessionId, plan.shards);
    const preferred = prefer === undefined ? undefined : decodeShardLease(prefer);
    if (preferred && preferred.shards === plan.shards)
      order = [preferred.shard, ...order.filter((s) => s !== preferred.shard)];
    let unreachable: Result<Lease> | undefined;
    let active = 0;
    for (const shard of order) {
      const granted = await settled(
        () => at(shard, plan.shards).acquire(sessionId, handoffId, ttlMs, plan.slices[shard]!),
        `Agent '${agent}'`,
      );
      if (granted.ok) return ok(outward(granted.value, shard, plan.shards));
      // One shard: its answer as it is (today's objects, today's answers).
      if (plan.shards === 1) return granted;
      const { error } = granted;
      if (error.code === "AGENT_UNAVAILABLE" && reasonOf(error) === "at_capacity") {
        active += activeOf(error);
        continue;
      }
      if (error.code === "DEPENDENCY_UNAVAILABLE") {
        // Its slice is out of reach for now; another shard may still grant.
        unreachable ??= granted;
        continue;
      }
      // Paused (every shard is paused together), or a refusal that no other shard would change.
      return granted;
    }
    if (unreachable) return unreachable;
    return err("AGENT_UNAVAILABLE", `The agent is at its capacity of ${capacity} sessions.`, {
      reason: "at_capacity",
      active,
      capacity,
      shards: plan.shards,
    });
  }

  async function confirm(leaseId: string, fencingToken?: number): Promise<Result<Lease>> {
    const { lease_id, shard, shards } = decodeShardLease(leaseId);
    const confirmed = await at(shard, shards).confirm(lease_id, fencingToken);
    if (confirmed.ok) return ok(outward(confirmed.value, shard, shards));
    // The shard names its own id in the refusal; the caller knows the lease by the outward one.
    const details = confirmed.error.details as Record<string, unknown> | undefined;
    return details?.lease_id === lease_id
      ? { ok: false, error: { ...confirmed.error, details: { ...details, lease_id: leaseId } } }
      : confirmed;
  }

  async function release(ref: LeaseRef, fencingToken?: number): Promise<Result<{ released: boolean }>> {
    if ("lease_id" in ref) {
      const { lease_id, shard, shards } = decodeShardLease(ref.lease_id);
      return at(shard, shards).release({ lease_id }, fencingToken);
    }
    const shards = plan
      ? Array.from({ length: plan.shards }, (_, shard) => ({ shard, shards: plan.shards }))
      : everyShard();
    const results = await Promise.all(
      shards.map((s) => settled(() => at(s.shard, s.shards).release(ref, fencingToken), `Agent '${agent}'`)),
    );
    const failed = results.find((r) => !r.ok);
    if (failed) return failed;
    return ok({ released: results.some((r) => r.ok && r.value.released) });
  }

  return { plan, acquire, confirm, release };
}

/**
 * The agent's load from its shards': paused when any shard is, active leases summed,
 * leases concatenated in shard order with their outward ids. The capacity is the
 * definition's (a shard no session has reached yet knows none); without a limit there is
 * one object, whose own answer stands.
 */
function mergeLoads(loads: { load: AgentLoad; shard: number; shards: number }[], capacity: number | null): AgentLoad {
  return {
    status: loads.some((l) => l.load.status === "paused") ? "paused" : "active",
    max_concurrent_sessions: capacity ?? loads[0]?.load.max_concurrent_sessions ?? null,
    active_leases: loads.reduce((n, l) => n + l.load.active_leases, 0),
    leases: loads.flatMap((l) => l.load.leases.map((lease) => outward(lease, l.shard, l.shards))),
  };
}

/**
 * Runs `call` on every shard of the agent's plan (capacity from its definition's
 * `max_concurrent_sessions`; null: no limit, the original object only) and merges the
 * loads. The first failure is returned after every shard was tried: pause and resume
 * are idempotent, so the caller retries the whole.
 */
async function everyShardLoad(
  env: Pick<Env, "AGENTS">,
  tenant: string,
  agent: string,
  capacity: number | null,
  slice: number,
  call: (rpc: AgentRpc) => Promise<Result<AgentLoad>>,
): Promise<Result<AgentLoad>> {
  const shards = capacity === null ? 1 : shardPlan(capacity, slice).shards;
  const results = await Promise.all(
    Array.from({ length: shards }, async (_, shard) => ({
      shard,
      shards,
      result: await settled(
        () => call(shardRpc(env, tenant, agent, shard, shards, AGENT_CALL_DEADLINE_MS)),
        `Agent '${agent}'`,
      ),
    })),
  );
  const loads: { load: AgentLoad; shard: number; shards: number }[] = [];
  for (const r of results) {
    if (!r.result.ok) return r.result;
    loads.push({ load: r.result.value, shard: r.shard, shards: r.shards });
  }
  return ok(mergeLoads(loads, capacity));
}

/** The agent's load over all its shards. */
export function agentLoad(
  env: Pick<Env, "AGENTS">,
  tenant: string,
  agent: string,
  capacity: number | null,
  slice: number = SHARD_SLICE,
): Promise<Result<AgentLoad>> {
  return everyShardLoad(env, tenant, agent, capacity, slice, (rpc) => rpc.load());
}

/** Pauses (no new sessions) or resumes the agent at every shard; answers the merged load. */
export function setAgentStatus(
  env: Pick<Env, "AGENTS">,
  tenant: string,
  agent: string,
  capacity: number | null,
  status: AgentStatus,
  slice: number = SHARD_SLICE,
): Promise<Result<AgentLoad>> {
  return everyShardLoad(env, tenant, agent, capacity, slice, (rpc) =>
    status === "paused" ? rpc.pause() : rpc.resume(),
  );
}
