import { describe, expect, it } from "vitest";
import {
  type CompiledPart,
  changedDefinitions,
  compileDefinitions,
  planBuild,
  SHARD_AGENTS,
  type StoredDefinition,
  shardBudgets,
  shardCount,
  shardOf,
  shardParts,
  shardsToSend,
} from "../../src/routing/router-build";
import { AgentDefinition } from "../../src/schemas/agent";

const definition = (name: string, keyword: string, patterns: string[] = []) =>
  JSON.stringify(
    AgentDefinition.parse({ name, triggers: { keywords: [keyword], patterns, examples: [`about ${keyword}`] } }),
  );
const parse = (text: string) => AgentDefinition.parse(JSON.parse(text));
/** A build's plan as the router object makes it: the changed definitions compiled, then planned. */
const plan = (previous: ReadonlyMap<string, CompiledPart>, shards: number, rows: StoredDefinition[]) =>
  planBuild(previous, shards, rows, compileDefinitions(changedDefinitions(previous, rows), parse));
const registry = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ name: `agent-${i}`, text: definition(`agent-${i}`, `word${i}`) }));

describe("router builds", () => {
  it("one shard up to SHARD_AGENTS agents, then a power of two; an agent keeps its shard while the count stands", () => {
    expect([0, 1, SHARD_AGENTS].map(shardCount)).toEqual([1, 1, 1]);
    expect(shardCount(SHARD_AGENTS + 1)).toBe(2);
    expect(shardCount(10_000)).toBe(64);
    expect(shardOf("billing", 64)).toBe(shardOf("billing", 64));
  });

  it("compiles every part the first time, then only the changed agent's, and relinks only its shard", () => {
    const rows = registry(SHARD_AGENTS + 40);
    const first = plan(new Map(), 0, rows);
    expect(first.compiled).toHaveLength(rows.length);
    expect(first.shards).toBe(2);
    expect(first.dirty).toEqual([0, 1]);
    const changed = rows.map((r) => (r.name === "agent-7" ? { name: r.name, text: definition(r.name, "other") } : r));
    const second = plan(first.parts, first.shards, changed);
    expect(second.compiled).toEqual(["agent-7"]);
    expect(second.dirty).toEqual([shardOf("agent-7", 2)]);
    // Unchanged parts are the same objects: nothing else was compiled.
    expect(second.parts.get("agent-8")).toBe(first.parts.get("agent-8"));
    const removed = plan(
      second.parts,
      second.shards,
      changed.filter((r) => r.name !== "agent-9"),
    );
    expect(removed.compiled).toEqual([]);
    expect(removed.dirty).toEqual([shardOf("agent-9", 2)]);
  });

  it("relinks every shard when the shard count changes", () => {
    const small = plan(new Map(), 0, registry(SHARD_AGENTS));
    const grown = plan(small.parts, small.shards, registry(SHARD_AGENTS + 1));
    expect(grown.compiled).toEqual([`agent-${SHARD_AGENTS}`]);
    expect(grown.dirty).toEqual([0, 1]);
  });

  it("shares the pattern budget out by name order, so all shards together stay within it", () => {
    const rows = Array.from({ length: 6 }, (_, i) => ({
      name: `p${i}`,
      text: definition(`p${i}`, `w${i}`, ["ab{3}"]), // 5 instructions
    }));
    const built = plan(new Map(), 0, rows);
    const budgets = shardBudgets(built.parts, 3, 12);
    expect(budgets.reduce((a, b) => a + b, 0)).toBe(10);
    expect(shardParts(built.parts, 3).flat()).toHaveLength(6);
  });
});

describe("loading a large registry", () => {
  it("sends the shards the caller lacks, as many as fit the answer (at least one), the rest on the next call", () => {
    const shards = ["a", "b", "c", "d"].map((stamp) => ({ stamp, bytes: 10 }));
    expect(shardsToSend(shards, new Set(["b"]), 25)).toEqual([0, 2]);
    expect(shardsToSend(shards, new Set(["a", "b", "c"]), 25)).toEqual([3]);
    expect(shardsToSend(shards, new Set(), 5)).toEqual([0]);
  });
});
