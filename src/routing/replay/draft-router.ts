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
import { type CompiledRuleRouter, routerFromShards, type WrappedShard, wrapShard } from "../rule-router";

/** A draft registry's router, built in the isolate, with what the build compiled. */
export interface DraftRouter {
  rules: CompiledRuleRouter;
  /** Every agent of the draft (enabled or not). */
  agents: RouteAgent[];
  /** Each agent's compiled part, by name (their `part.cost` is what the pattern budget counts). */
  parts: ReadonlyMap<string, CompiledPart>;
}

/** Agents compiled between two yields (a few ms each at most). */
const COMPILE_CHUNK = 25;
const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/**
 * Builds the router of a registry given as stored definitions (name order) by the path the
 * router object builds a version (src/routing/router-build.ts) and an isolate loads it: compile
 * each part, split into shards with their share of the pattern budget, link, encode, decode,
 * wrap. The same registry therefore decides here as the tenant's real router does. A large
 * registry takes a second or more: `turn` is awaited between chunks of agents and between
 * shards, so the isolate's other requests run meanwhile.
 */
export async function buildDraftRouter(
  rows: readonly StoredDefinition[],
  parse: (text: string) => AgentDefinition,
  turn: () => Promise<void> = tick,
): Promise<DraftRouter> {
  const parts = new Map<string, CompiledPart>();
  for (let i = 0; i < rows.length; i += COMPILE_CHUNK) {
    // Rows are in name order, so the chunks' parts are too.
    for (const [name, part] of compileDefinitions(rows.slice(i, i + COMPILE_CHUNK), parse)) parts.set(name, part);
    await turn();
  }
  const shards = shardCount(parts.size);
  const budgets = shardBudgets(parts, shards);
  const wrapped: WrappedShard[] = [];
  for (const [k, members] of shardParts(parts, shards).entries()) {
    wrapped.push(wrapShard(decodeShard(encodeShard(linkShard(members, budgets[k]!, shards)))));
    await turn();
  }
  return { rules: routerFromShards(wrapped), agents: wrapped.flatMap((w) => w.image.agents), parts };
}
