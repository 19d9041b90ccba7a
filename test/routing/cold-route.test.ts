import { describe, expect, it } from "vitest";
import { decideFromSections, prepareShard, type SectionSource } from "../../src/routing/cold-route";
import { linkShard, shardBudgets, shardCount, shardParts } from "../../src/routing/router-build";
import { encodeShard, readHead, type ShardSections } from "../../src/routing/router-codec";
import { compileAgentPart } from "../../src/routing/router-image";
import { routerFromShards, wrapShard } from "../../src/routing/rule-router";
import type { AgentDefinition } from "../../src/schemas/agent";
import { inputs, synthetic, team } from "./router-fixtures";

/** A registry built as the router object builds it: its shards' sections, and the loaded router. */
function built(agents: AgentDefinition[], shards = shardCount(agents.length)) {
  const parts = new Map(agents.map((a) => [a.name, { text: "", part: compileAgentPart(a), compile_ms: 0 }]));
  const budgets = shardBudgets(parts, shards);
  const images = shardParts(parts, shards).map((members, k) => linkShard(members, budgets[k]!, shards));
  const sections = images.map(encodeShard);
  return { sections, loaded: routerFromShards(images.map(wrapShard)) };
}

/** Storage as the router object reads it, counting what a route reads. */
function source(sections: ShardSections[]) {
  const read = { buckets: 0, texts: 0 };
  const s: SectionSource = {
    buckets: (wanted) =>
      new Map(
        [...wanted].map(([k, list]) => {
          read.buckets += list.length;
          return [k, new Map(list.map((b) => [b, sections[k]!.buckets[b]!]))];
        }),
      ),
    texts: (k, chunks) => {
      read.texts += chunks.length;
      return new Map(chunks.map((c) => [c, sections[k]!.texts[c]!]));
    },
  };
  return { source: s, read };
}

const plain = (value: unknown) => JSON.parse(JSON.stringify(value));

describe("a route decided from a stored version's sections", () => {
  it.each([
    ["one trained shard", team, undefined],
    // 120 agents in one shard: trained, with sparse model rows (its counted model's sliced row by row).
    ["one trained shard of 120 agents", synthetic(120).agents, 1],
    ["four counted shards", synthetic(120).agents, 4],
  ] as const)("decides as the loaded router does, explanation included: %s", async (_, agents, shards) => {
    const { sections, loaded } = built([...agents], shards);
    const prepared = sections.map((s) => prepareShard(readHead(s.head)));
    const { source: store } = source(sections);
    const words = synthetic(120).words;
    for (const input of inputs(agents, words, 60)) {
      const decision = await decideFromSections(input, prepared, store, () => true);
      expect(plain(decision), input).toEqual(plain(loaded.decide(input)));
    }
  });

  it("reads a few of the buckets, and the texts chunks of the chosen agent's examples only", async () => {
    const { agents, words } = synthetic(600);
    const { sections } = built(agents);
    const prepared = sections.map((s) => prepareShard(readHead(s.head)));
    const { source: store, read } = source(sections);
    const total = sections.reduce((n, s) => n + s.buckets.length, 0);
    const decision = await decideFromSections(
      `${words[3]} ${words[4]} ${agents[9]!.triggers.examples[0]}`,
      prepared,
      store,
      () => true,
    );
    expect(decision?.candidates.length).toBeGreaterThan(0);
    expect(read.buckets).toBeLessThan(total / 4);
    // An agent's few examples lie in one chunk, or across the border of two.
    expect(read.texts).toBeGreaterThanOrEqual(1);
    expect(read.texts).toBeLessThanOrEqual(2);
  });

  it("answers null when its version was replaced before the explanation's texts were read", async () => {
    const { sections } = built(team);
    const prepared = sections.map((s) => prepareShard(readHead(s.head)));
    const { source: store, read } = source(sections);
    expect(await decideFromSections("I want a refund", prepared, store, () => false)).toBeNull();
    expect(read.texts).toBe(0);
  });
});
