import { agentObjectName } from "../sessions/ids";

/**
 * Capacity sharding (docs/handoffs.md, Capacity shards for hot agents): a hot agent's `max_concurrent_sessions`
 * is split into slices, each enforced by its own AgentDO, so no single object takes
 * every acquire of the tenant. Slices never move between shards: the limit is their sum,
 * and each shard enforces its slice exactly in one synchronous SQL transaction. A session
 * tries its home shard first and spills over to the others in rotation when it is full.
 * Pure: object names and lease ids only; the calls are src/services/agent-capacity.ts.
 */

/** Sessions per shard object: below this an agent keeps its one object. */
export const SHARD_SLICE = 250;
/** The most objects one agent's capacity is split over (a refused acquire visits them all). */
export const MAX_SHARDS = 16;

/** How a capacity is split: `slices[i]` is shard i's share; the slices sum to the capacity. */
export interface ShardPlan {
  shards: number;
  slices: number[];
}

/**
 * `min(MAX_SHARDS, ceil(capacity / slice))` shards, the capacity split evenly over them
 * (the remainder one each over the first ones), so the slices always sum to `capacity`.
 * A capacity of at most one slice is one shard: the agent's original object.
 */
export function shardPlan(capacity: number, slice: number = SHARD_SLICE): ShardPlan {
  if (!Number.isInteger(capacity) || capacity < 1)
    throw new RangeError(`capacity must be a positive integer, not ${capacity}`);
  if (!Number.isInteger(slice) || slice < 1) throw new RangeError(`slice must be a positive integer, not ${slice}`);
  const shards = Math.min(MAX_SHARDS, Math.ceil(capacity / slice));
  const base = Math.floor(capacity / shards);
  const extra = capacity - base * shards;
  return { shards, slices: Array.from({ length: shards }, (_, i) => base + (i < extra ? 1 : 0)) };
}

/** FNV-1a (32 bits) of the string's UTF-16 code units: stable across isolates and deploys. */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/**
 * The shards a session tries, in order: its home shard (hashed, so the same session always
 * starts at the same place and sessions spread evenly), then the others in rotation.
 * Every shard appears exactly once.
 */
export function shardOrder(sessionId: string, shards: number): number[] {
  if (!Number.isInteger(shards) || shards < 1) throw new RangeError(`shards must be a positive integer, not ${shards}`);
  const home = fnv1a(sessionId) % shards;
  return Array.from({ length: shards }, (_, i) => (home + i) % shards);
}

/**
 * The object name of shard `shard` of a `shards`-shard plan. A one-shard plan is the
 * agent's original object, so agents under one slice (and their leases) are unchanged.
 * The shard count is part of the name: a capacity change across a shard boundary lands
 * on new objects, and leases held in the old plan's objects are not counted by the new
 * plan until they are released (the limit may be exceeded by at most those meanwhile).
 */
export function shardObjectName(tenant: string, agent: string, shard: number, shards: number): string {
  const base = agentObjectName(tenant, agent);
  return shards === 1 ? base : `${base}#${shard}/${shards}`;
}

/** Where a lease lives: the id its shard object knows it by, and that shard of that plan. */
export interface ShardLease {
  lease_id: string;
  shard: number;
  shards: number;
}

const SUFFIX = /^(.*)~s(\d+)of(\d+)$/;

/**
 * The lease id a sharded agent hands out: the shard object's own id plus `~s<i>of<n>`,
 * so confirm and release go straight to the right object with nothing else stored. The
 * plan's shard count is in it too, so a lease still reaches its object after the
 * agent's capacity changed. A one-shard plan's ids are unchanged.
 */
export function encodeShardLease(lease: ShardLease): string {
  return lease.shards === 1 ? lease.lease_id : `${lease.lease_id}~s${lease.shard}of${lease.shards}`;
}

/**
 * Inverse of `encodeShardLease`. An id without a well-formed suffix is a one-shard
 * agent's (the original object's), which answers for it.
 */
export function decodeShardLease(leaseId: string): ShardLease {
  const match = SUFFIX.exec(leaseId);
  if (match) {
    const shard = Number(match[2]);
    const shards = Number(match[3]);
    if (shards > 1 && shards <= MAX_SHARDS && shard < shards && match[1]) return { lease_id: match[1], shard, shards };
  }
  return { lease_id: leaseId, shard: 0, shards: 1 };
}

/**
 * Every (shard, shards) pair of every possible plan, one-shard first: where a session's
 * leases at an agent can be when the capacity they were taken with is unknown.
 */
export function everyShard(): { shard: number; shards: number }[] {
  const out: { shard: number; shards: number }[] = [];
  for (let shards = 1; shards <= MAX_SHARDS; shards++)
    for (let shard = 0; shard < shards; shard++) out.push({ shard, shards });
  return out;
}
