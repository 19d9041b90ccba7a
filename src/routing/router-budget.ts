/**
 * One memory budget for the routers an isolate holds (docs/scaling.md, "Memory"): the tenants'
 * routers the Worker keeps (src/services/registry-cache.ts) and a router object's own loaded
 * router (durable-objects/router/warm-router.ts) alike. A holder registers its router's shards;
 * a shard two holders share (the shard pool, src/routing/shard-pool.ts) counts once. When a
 * router is held past the budget, the least recently used holders are let go until the
 * shards held fit again — each holder reloads from the stored version when next asked. A
 * router bigger than the whole budget is not held at all: its holder says so and is not let go
 * of anything else for it.
 */
import type { WrappedShard } from "./rule-router";

/**
 * Bytes of routers one isolate holds by default, as the routers count them: half of a Workers
 * isolate's 128 MB, leaving the other half to the code, the requests in flight and the
 * garbage a load makes, with room for a loaded 10,000-agent router (docs/benchmarks.md).
 */
export const ROUTER_BUDGET_BYTES = 64_000_000;

/**
 * The budget an operator set (`RELAY_ROUTER_BUDGET_MB`, megabytes; docs/configuration.md), or
 * ROUTER_BUDGET_BYTES when it is unset or not a number ≥ 0.
 */
export function routerBudget(env: { RELAY_ROUTER_BUDGET_MB?: string }): number {
  const text = env.RELAY_ROUTER_BUDGET_MB?.trim() ?? "";
  const mb = Number(text);
  return text !== "" && Number.isFinite(mb) && mb >= 0 ? Math.round(mb * 1e6) : ROUTER_BUDGET_BYTES;
}

interface Holding {
  shards: readonly WrappedShard[];
  release: () => void;
}

/** Holders in order of use, least recent first. */
const holders = new Map<object, Holding>();
/** How many holders hold each shard. */
const refs = new Map<WrappedShard, number>();
let heldBytes = 0;

/** A wrapped shard's bytes, as its router counts them. */
export function shardBytes(shard: WrappedShard): number {
  return shard.bytes;
}

function take(shards: readonly WrappedShard[]): void {
  for (const shard of new Set(shards)) {
    const n = refs.get(shard) ?? 0;
    if (n === 0) heldBytes += shardBytes(shard);
    refs.set(shard, n + 1);
  }
}

function drop(shards: readonly WrappedShard[]): void {
  for (const shard of new Set(shards)) {
    const n = refs.get(shard) ?? 0;
    if (n <= 1) {
      refs.delete(shard);
      if (n === 1) heldBytes -= shardBytes(shard);
    } else refs.set(shard, n - 1);
  }
}

/**
 * Holds `shards` for `holder` (replacing what it held), as the most recently used; lets go of
 * the least recently used others while the isolate's shards are past `budget` (each is told
 * through its `release`). False, and nothing held for it, when its shards alone are past the
 * budget: the caller serves its router without keeping it.
 */
export function holdRouter(
  holder: object,
  shards: readonly WrappedShard[],
  release: () => void,
  budget = ROUTER_BUDGET_BYTES,
): boolean {
  releaseRouter(holder);
  let own = 0;
  for (const shard of new Set(shards)) own += shardBytes(shard);
  if (own > budget) return false;
  take(shards);
  holders.set(holder, { shards, release });
  for (const [other, holding] of holders) {
    if (heldBytes <= budget) break;
    // A holder whose shards another holds too frees nothing alone; the other goes next in turn.
    if (other === holder) continue;
    holders.delete(other);
    drop(holding.shards);
    holding.release();
  }
  return true;
}

/** Marks `holder`'s router as just used. */
export function touchRouter(holder: object): void {
  const holding = holders.get(holder);
  if (holding === undefined) return;
  holders.delete(holder);
  holders.set(holder, holding);
}

/** Stops counting `holder`'s router (it let go of it itself). */
export function releaseRouter(holder: object): void {
  const holding = holders.get(holder);
  if (holding === undefined) return;
  holders.delete(holder);
  drop(holding.shards);
}

/** The bytes of the shards this isolate's routers hold (each shared shard once), and the holders. */
export function heldRouters(): { bytes: number; holders: number } {
  return { bytes: heldBytes, holders: holders.size };
}
