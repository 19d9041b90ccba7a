import { describe, expect, it } from "vitest";
import {
  decodeShardLease,
  encodeShardLease,
  everyShard,
  MAX_SHARDS,
  SHARD_SLICE,
  shardObjectName,
  shardOrder,
  shardPlan,
} from "../../src/handoff/capacity-shards";
import { agentObjectName } from "../../src/sessions/ids";

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe("shardPlan", () => {
  it.each([
    [1, 1],
    [249, 1],
    [250, 1],
    [251, 2],
    [1000, 4],
    [5000, 16],
    [100_000, 16],
  ])("capacity %i → %i shard(s), slices summing to the capacity", (capacity, shards) => {
    const plan = shardPlan(capacity);
    expect(plan.shards).toBe(shards);
    expect(plan.slices).toHaveLength(shards);
    expect(sum(plan.slices)).toBe(capacity);
    // Even: no two slices differ by more than one, the larger ones first.
    expect(Math.max(...plan.slices) - Math.min(...plan.slices)).toBeLessThanOrEqual(1);
    expect([...plan.slices].sort((a, b) => b - a)).toEqual(plan.slices);
    if (shards < MAX_SHARDS) expect(Math.max(...plan.slices)).toBeLessThanOrEqual(SHARD_SLICE);
  });

  it("splits 251 as 126 + 125 and caps 100000 at 16 slices of 6250", () => {
    expect(shardPlan(251).slices).toEqual([126, 125]);
    expect(shardPlan(100_000).slices).toEqual(Array(16).fill(6250));
  });

  it("sums exactly for every capacity up to 5000 and for small slices", () => {
    for (let capacity = 1; capacity <= 5000; capacity++) {
      const plan = shardPlan(capacity);
      expect(sum(plan.slices)).toBe(capacity);
      expect(plan.slices.every((s) => s >= 1)).toBe(true);
    }
    expect(shardPlan(150, 25)).toEqual({ shards: 6, slices: [25, 25, 25, 25, 25, 25] });
    expect(shardPlan(7, 3)).toEqual({ shards: 3, slices: [3, 2, 2] });
  });

  it("refuses a capacity or slice that is not a positive integer", () => {
    expect(() => shardPlan(0)).toThrow(RangeError);
    expect(() => shardPlan(2.5)).toThrow(RangeError);
    expect(() => shardPlan(10, 0)).toThrow(RangeError);
  });
});

describe("shardOrder", () => {
  it("is a permutation of the shards starting at a stable home, then in rotation", () => {
    for (const shards of [1, 2, 6, 16]) {
      for (let i = 0; i < 50; i++) {
        const order = shardOrder(`ses_${i}`, shards);
        expect([...order].sort((a, b) => a - b)).toEqual(Array.from({ length: shards }, (_, k) => k));
        expect(shardOrder(`ses_${i}`, shards)).toEqual(order);
        for (const [k, s] of order.entries()) expect(s).toBe((order[0]! + k) % shards);
      }
    }
  });

  it("spreads homes over every shard", () => {
    const homes = new Map<number, number>();
    for (let i = 0; i < 1600; i++) {
      const home = shardOrder(`ses_${i}`, 16)[0]!;
      homes.set(home, (homes.get(home) ?? 0) + 1);
    }
    expect(homes.size).toBe(16);
    expect(Math.min(...homes.values())).toBeGreaterThan(50);
  });
});

describe("shard objects and lease ids", () => {
  it("names shard 0 of a one-shard plan as the agent's original object, and others apart", () => {
    expect(shardObjectName("alpha", "billing", 0, 1)).toBe(agentObjectName("alpha", "billing"));
    const names = everyShard().map(({ shard, shards }) => shardObjectName("alpha", "billing", shard, shards));
    expect(new Set(names).size).toBe(names.length);
    expect(names).toHaveLength((MAX_SHARDS * (MAX_SHARDS + 1)) / 2);
    expect(shardObjectName("alpha", "billing", 2, 4)).not.toBe(shardObjectName("alpha", "billing", 2, 5));
  });

  it("round-trips a lease id through encode and decode, leaving one-shard ids unchanged", () => {
    expect(encodeShardLease({ lease_id: "lse_01ABC", shard: 0, shards: 1 })).toBe("lse_01ABC");
    expect(decodeShardLease("lse_01ABC")).toEqual({ lease_id: "lse_01ABC", shard: 0, shards: 1 });
    for (const { shard, shards } of everyShard()) {
      const id = encodeShardLease({ lease_id: "lse_01ABC", shard, shards });
      expect(decodeShardLease(id)).toEqual({ lease_id: "lse_01ABC", shard, shards });
    }
    expect(encodeShardLease({ lease_id: "lse_X", shard: 3, shards: 6 })).toBe("lse_X~s3of6");
  });

  it("reads a malformed suffix as a one-shard id", () => {
    for (const id of ["lse_X~s6of6", "lse_X~s0of1", "lse_X~s0of17", "~s1of2", "lse_X~sAofB"]) {
      expect(decodeShardLease(id)).toEqual({ lease_id: id, shard: 0, shards: 1 });
    }
  });
});
