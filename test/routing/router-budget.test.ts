import { describe, expect, it } from "vitest";
import {
  heldRouters,
  holdRouter,
  releaseRouter,
  routerBudget,
  shardBytes,
  touchRouter,
} from "../../src/routing/router-budget";
import { compileAgentPart, linkRouterImage } from "../../src/routing/router-image";
import { type WrappedShard, wrapShard } from "../../src/routing/rule-router";
import { team } from "./router-fixtures";

/** A real wrapped shard of the test team (each call a shard of its own, as another tenant's). */
const shard = (): WrappedShard => wrapShard(linkRouterImage(team.map(compileAgentPart)));

/** Holders that note when they are let go. */
function holders(n: number) {
  const released: number[] = [];
  return { released, list: Array.from({ length: n }, (_, k) => ({ k, release: () => released.push(k) })) };
}

describe("the isolate's router budget", () => {
  const size = shardBytes(shard());

  it("lets go of the least recently used routers past the budget, and only as many as it must", () => {
    const { released, list } = holders(4);
    const shards = list.map(() => shard());
    const budget = heldRouters().bytes + 3 * size;
    for (const h of list.slice(0, 3)) expect(holdRouter(h, [shards[h.k]!], h.release, budget)).toBe(true);
    expect(released).toEqual([]);
    touchRouter(list[0]!);
    // Holder 1 is now the least recently used: the fourth router lets it go.
    expect(holdRouter(list[3]!, [shards[3]!], list[3]!.release, budget)).toBe(true);
    expect(released).toEqual([1]);
    expect(heldRouters().bytes).toBeLessThanOrEqual(budget);
    for (const h of list) releaseRouter(h);
  });

  it("counts a shard two holders share once", () => {
    const { released, list } = holders(2);
    const shared = shard();
    const before = heldRouters().bytes;
    const budget = before + size;
    expect(holdRouter(list[0]!, [shared], list[0]!.release, budget)).toBe(true);
    expect(holdRouter(list[1]!, [shared], list[1]!.release, budget)).toBe(true);
    expect(heldRouters().bytes).toBe(before + size);
    expect(released).toEqual([]);
    for (const h of list) releaseRouter(h);
    expect(heldRouters().bytes).toBe(before);
  });

  it("does not hold a router bigger than the whole budget, and lets go of nothing for it", () => {
    const { released, list } = holders(2);
    const budget = heldRouters().bytes + 2 * size;
    expect(holdRouter(list[0]!, [shard()], list[0]!.release, budget)).toBe(true);
    const before = heldRouters().bytes;
    expect(holdRouter(list[1]!, [shard(), shard(), shard()], list[1]!.release, 2 * size)).toBe(false);
    expect(released).toEqual([]);
    expect(heldRouters().bytes).toBe(before);
    for (const h of list) releaseRouter(h);
  });

  it("replaces what a holder held when it holds a new version", () => {
    const { list } = holders(1);
    const before = heldRouters().bytes;
    holdRouter(list[0]!, [shard()], list[0]!.release, before + 10 * size);
    holdRouter(list[0]!, [shard()], list[0]!.release, before + 10 * size);
    expect(heldRouters().bytes).toBe(before + size);
    releaseRouter(list[0]!);
  });

  it("is 64 MB unless RELAY_ROUTER_BUDGET_MB says otherwise", () => {
    expect(routerBudget({})).toBe(64_000_000);
    expect(routerBudget({ RELAY_ROUTER_BUDGET_MB: "96" })).toBe(96_000_000);
    expect(routerBudget({ RELAY_ROUTER_BUDGET_MB: "0.5" })).toBe(500_000);
    expect(routerBudget({ RELAY_ROUTER_BUDGET_MB: "lots" })).toBe(64_000_000);
    expect(routerBudget({ RELAY_ROUTER_BUDGET_MB: "-1" })).toBe(64_000_000);
    expect(routerBudget({ RELAY_ROUTER_BUDGET_MB: " " })).toBe(64_000_000);
  });
});
