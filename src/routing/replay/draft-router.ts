import type { AgentDefinition } from "../../schemas/agent";
import {
  type CompiledPart,
  compileDefinitions,
  linkShard,
  type StoredDefinition,
  shardBudgets,
  shardCount,
  shardParts,
} from "../router-build";
import { decodeShard, encodeShard } from "../router-codec";
import type { RouteAgent } from "../router-image";
import { type CompiledRuleRouter, routerFromShards, wrapShard } from "../rule-router";

/** A draft registry's router, built in the isolate, with what the build compiled. */
export interface DraftRouter {
  rules: CompiledRuleRouter;
  /** Every agent of the draft (enabled or not). */
  agents: RouteAgent[];
  /** Each agent's compiled part, by name (their `part.cost` is what the pattern budget counts). */
  parts: ReadonlyMap<string, CompiledPart>;
}

/**
 * Builds the router of a registry given as stored definitions (name order) by the path the
 * router object builds a version (src/routing/router-build.ts) and an isolate loads it: compile
 * each part, split into shards with their share of the pattern budget, link, encode, decode,
 * wrap. The same registry therefore decides here as the tenant's real router does.
 */
export function buildDraftRouter(
  rows: readonly StoredDefinition[],
  parse: (text: string) => AgentDefinition,
): DraftRouter {
  const parts = compileDefinitions(rows, parse);
  const shards = shardCount(parts.size);
  const budgets = shardBudgets(parts, shards);
  const wrapped = shardParts(parts, shards).map((members, k) =>
    wrapShard(decodeShard(encodeShard(linkShard(members, budgets[k]!, shards)))),
  );
  return { rules: routerFromShards(wrapped), agents: wrapped.flatMap((w) => w.image.agents), parts };
}
