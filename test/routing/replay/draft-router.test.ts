import { describe, expect, it } from "vitest";
import { definitionText, storedDefinition } from "../../../src/registry/store";
import { buildDraftRouter } from "../../../src/routing/replay/draft-router";
import { compileDefinitions, linkShard, shardBudgets, shardCount, shardParts } from "../../../src/routing/router-build";
import { routerFromShards, wrapShard } from "../../../src/routing/rule-router";
import { inputs, synthetic } from "../router-fixtures";

describe("buildDraftRouter", () => {
  it("decides as the router object's build does, yielding between chunks of agents and between shards", async () => {
    const { agents, words } = synthetic(300);
    const rows = agents
      .map((a) => ({ name: a.name, text: definitionText(a) }))
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    let turns = 0;
    const draft = await buildDraftRouter(rows, storedDefinition, async () => {
      turns++;
    });
    const shards = shardCount(rows.length);
    expect(shards).toBeGreaterThan(1);
    expect(turns).toBe(Math.ceil(rows.length / 25) + shards);
    // The object's build, without the codec's round trip.
    const parts = compileDefinitions(rows, storedDefinition);
    const budgets = shardBudgets(parts, shards);
    const direct = routerFromShards(
      shardParts(parts, shards).map((m, k) => wrapShard(linkShard(m, budgets[k]!, shards))),
    );
    for (const input of inputs(agents, words, 40))
      expect(draft.rules.decide(input).agent).toBe(direct.decide(input).agent);
    expect(draft.agents).toHaveLength(300);
  });
});
