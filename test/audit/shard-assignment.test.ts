import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { homeShard, readShard, type ShardAssignment, writeShard } from "../../src/audit/shard-assignment";
import { ensureAssignment, stepAssignment } from "../../src/audit/shard-store";
import { shardDatabases } from "../../src/services/tenant-shards";

describe("a tenant's shard", () => {
  it("is its name's hash over the shards bound when it is first used", () => {
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 400; i++) counts[homeShard(`tenant-${i}`, 4)]! += 1;
    // Spread: no shard gets fewer than half its share of 400 tenants.
    expect(Math.min(...counts)).toBeGreaterThan(50);
    expect(homeShard("alpha", 2)).toBe(homeShard("alpha", 2));
  });

  it("stays where it was assigned when shards are added", async () => {
    const first = await ensureAssignment(env.DB, "grower", 1, Date.now());
    expect(first.shard).toBe(0);
    expect(homeShard("grower", 64)).not.toBe(0);
    expect((await ensureAssignment(env.DB, "grower", 64, Date.now())).shard).toBe(0);
  });

  it("changes by one driver's step only: a step from an older version is refused", async () => {
    const a = await ensureAssignment(env.DB, "racer", 2, Date.now());
    const change = { shard: a.shard, phase: "copying" as const, other: 1 - a.shard, cursor: null, not_before: 0 };
    expect(await stepAssignment(env.DB, a, change, Date.now())).toMatchObject({ phase: "copying", version: 1 });
    expect(await stepAssignment(env.DB, a, change, Date.now())).toBeNull();
  });

  it("takes writes nowhere while its rows are copied, and reads from the source until the switch", () => {
    const base: ShardAssignment = {
      tenant: "t",
      shard: 0,
      phase: "settled",
      other: null,
      cursor: null,
      not_before: 0,
      version: 0,
      updated_at: "",
    };
    expect([readShard(base), writeShard(base)]).toEqual([0, 0]);
    const copying = { ...base, phase: "copying" as const, other: 1 };
    expect([readShard(copying), writeShard(copying)]).toEqual([0, null]);
    const cleaning = { ...base, shard: 1, phase: "cleaning" as const, other: 0 };
    expect([readShard(cleaning), writeShard(cleaning)]).toEqual([1, 1]);
  });
});

describe("the shards bound", () => {
  it("are AUDIT_DB_0 on; with none, the registry database is the one shard", () => {
    expect(shardDatabases(env)).toEqual([env.AUDIT_DB_0, env.AUDIT_DB_1]);
    expect(shardDatabases({ DB: env.DB })).toEqual([env.DB]);
  });
});
