import { describe, expect, it } from "vitest";
import type { WrappedShard } from "../../src/routing/rule-router";
import { sharedShards, shareShard } from "../../src/routing/shard-pool";

/** A stand-in for a wrapped shard: the pool holds it by reference and reads nothing of it. */
const shard = () => ({}) as WrappedShard;

describe("the shard pool of an isolate", () => {
  it("gives the shards offered for a tenant, by stamp, the same objects, and none of another tenant's", () => {
    const a = shard();
    const b = shard();
    shareShard("pool-a", "v1:0", a);
    shareShard("pool-a", "v1:1", b);
    shareShard("pool-b", "v1:0", shard());
    const held = sharedShards("pool-a");
    expect([...held.keys()].sort()).toEqual(["v1:0", "v1:1"]);
    expect(held.get("v1:0")).toBe(a);
    expect(held.get("v1:1")).toBe(b);
    expect(sharedShards("pool-b").get("v1:0")).not.toBe(a);
    expect(sharedShards("pool-c").size).toBe(0);
  });

  it("replaces a stamp's shard when it is offered again", () => {
    const newer = shard();
    shareShard("pool-d", "v1:0", shard());
    shareShard("pool-d", "v1:0", newer);
    expect(sharedShards("pool-d").get("v1:0")).toBe(newer);
  });
});
