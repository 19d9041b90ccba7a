/**
 * Wrapped shards shared by everything in one isolate that holds a tenant's router
 * (docs/scaling.md, "The first route of a fresh isolate"): the router object's own copy and a
 * Worker's, when the object runs in the same isolate as the Worker, are then one copy, not two.
 * A shard is known by its tenant and stamp (a stamp names one shard of one version) and held
 * weakly: the pool keeps nothing alive that no router holds.
 */
import type { WrappedShard } from "./rule-router";

const pool = new Map<string, Map<string, WeakRef<WrappedShard>>>();

/** Offers a wrapped shard to the isolate's other holders of the tenant's router. */
export function shareShard(tenant: string, stamp: string, shard: WrappedShard): void {
  let shards = pool.get(tenant);
  if (shards === undefined) {
    shards = new Map();
    pool.set(tenant, shards);
  }
  // The tenant's shards no router holds any more go as the next is offered.
  for (const [held, ref] of shards) if (ref.deref() === undefined) shards.delete(held);
  shards.set(stamp, new WeakRef(shard));
}

/** The tenant's shards some router in this isolate holds, by stamp (strong references, for the caller's use). */
export function sharedShards(tenant: string): Map<string, WrappedShard> {
  const out = new Map<string, WrappedShard>();
  for (const [stamp, ref] of pool.get(tenant) ?? []) {
    const shard = ref.deref();
    if (shard !== undefined) out.set(stamp, shard);
  }
  return out;
}
