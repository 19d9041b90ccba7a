/**
 * How a tenant's router is built version by version (docs/scaling.md): pure functions the
 * router object calls, so the object only loads, calls these and keeps the result.
 *
 * - A registry of up to SHARD_AGENTS agents is one shard (its classifier trained jointly);
 *   a larger one is split into a power-of-two number of shards by a hash of the agent's name,
 *   so one agent always lands in the same shard while the count stands.
 * - `changedDefinitions` compares the registry's definitions with the parts already compiled
 *   (by the definition's text): only those are compiled again (`compileDefinitions`, timed
 *   apart by the caller), and `planBuild` relinks only the shards whose membership or parts
 *   changed.
 * - The tenant's pattern budget is split over the shards by what each one's patterns would
 *   take of it in name order, so the bound holds over all shards together.
 */
import type { AgentDefinition } from "../schemas/agent";
import { TRAINED_AGENTS_MAX } from "./classifier/classifier-link";
import { type AgentPart, compileAgentPart, linkRouterImage, type RouterImage } from "./router-image";
import { PATTERN_BUDGET } from "./rules";
import { DENSE_CELL_LIMIT } from "./rules/automaton";
import { patternCharge } from "./rules/compile-rules";

/** Agents per shard, on average, once a registry has more than one. */
export const SHARD_AGENTS = TRAINED_AGENTS_MAX;

/** How many shards a registry of `agents` agents has (1, or a power of two). */
export function shardCount(agents: number): number {
  let shards = 1;
  while (shards * SHARD_AGENTS < agents) shards *= 2;
  return shards;
}

/** The shard of an agent (FNV-1a of its name). */
export function shardOf(name: string, shards: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return (h >>> 0) % shards;
}

/** An agent's part with the definition text it was compiled from. */
export interface CompiledPart {
  text: string;
  part: AgentPart;
  compile_ms: number;
}

/** One linked shard as the router object holds it: its sections are in storage. */
export interface BuiltShard {
  /** Changes whenever the shard is relinked (isolates keep shards whose stamp they hold). */
  stamp: string;
  /** Bytes of its sections (what a load sends). */
  bytes: number;
  agents: number;
  link_ms: number;
}

/**
 * The shards to send an isolate that holds `held` (by stamp): the indexes of the others, in
 * order, as many as fit `maxBytes` (at least one); the rest are left for the next call.
 */
export function shardsToSend(
  shards: readonly { stamp: string; bytes: number }[],
  held: ReadonlySet<string>,
  maxBytes: number,
): number[] {
  let sent = 0;
  const out: number[] = [];
  shards.forEach((shard, k) => {
    if (held.has(shard.stamp)) return;
    if (sent > 0 && sent + shard.bytes > maxBytes) return;
    sent += shard.bytes;
    out.push(k);
  });
  return out;
}

/** A definition as read from the registry: the agent's name and its stored text. */
export interface StoredDefinition {
  name: string;
  text: string;
}

/** What a build must do to reach a registry's state from the parts it holds. */
export interface BuildPlan {
  /** The parts of the new state, in name order (unchanged parts reused). */
  parts: Map<string, CompiledPart>;
  /** Agents whose part is new in this state (compiled for it). */
  compiled: string[];
  shards: number;
  /** Shards to relink. */
  dirty: number[];
}

/** In name order (the registry's read, or the parts plus one change, usually are already). */
function byName(definitions: readonly StoredDefinition[]): readonly StoredDefinition[] {
  let ordered = true;
  for (let i = 1; i < definitions.length && ordered; i++) ordered = definitions[i - 1]!.name < definitions[i]!.name;
  return ordered ? definitions : [...definitions].sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** The definitions whose text differs from the part held for them: what a build compiles. */
export function changedDefinitions(
  previous: ReadonlyMap<string, CompiledPart>,
  definitions: readonly StoredDefinition[],
): StoredDefinition[] {
  return byName(definitions).filter(({ name, text }) => previous.get(name)?.text !== text);
}

/** Compiles definitions into parts (`compile_ms` is left to the caller, whose clock may stand still). */
export function compileDefinitions(
  definitions: readonly StoredDefinition[],
  parse: (text: string) => AgentDefinition,
): Map<string, CompiledPart> {
  return new Map(
    definitions.map(({ name, text }) => [name, { text, part: compileAgentPart(parse(text)), compile_ms: 0 }]),
  );
}

/**
 * The parts of a registry's state and the shards to relink: parts held are reused where the
 * text matches, the others come from `compiled` (the changed definitions, compiled).
 */
export function planBuild(
  previous: ReadonlyMap<string, CompiledPart>,
  previousShards: number,
  definitions: readonly StoredDefinition[],
  compiled: ReadonlyMap<string, CompiledPart>,
): BuildPlan {
  const parts = new Map<string, CompiledPart>();
  const fresh: string[] = [];
  for (const { name, text } of byName(definitions)) {
    const held = previous.get(name);
    if (held !== undefined && held.text === text) {
      parts.set(name, held);
      continue;
    }
    const part = compiled.get(name);
    if (part === undefined || part.text !== text) throw new RangeError(`agent '${name}' changed but was not compiled`);
    parts.set(name, part);
    fresh.push(name);
  }
  const shards = shardCount(parts.size);
  const dirty = new Set<number>();
  if (shards !== previousShards) for (let k = 0; k < shards; k++) dirty.add(k);
  for (const name of fresh) dirty.add(shardOf(name, shards));
  for (const name of previous.keys()) if (!parts.has(name)) dirty.add(shardOf(name, shards));
  return { parts, compiled: fresh, shards, dirty: [...dirty].sort((a, b) => a - b) };
}

/** The parts of each shard, in name order. */
export function shardParts(parts: ReadonlyMap<string, CompiledPart>, shards: number): AgentPart[][] {
  const out: AgentPart[][] = Array.from({ length: shards }, () => []);
  for (const [name, { part }] of parts) out[shardOf(name, shards)]!.push(part);
  return out;
}

/**
 * Each shard's share of the pattern budget: what its patterns take of the tenant's budget
 * when the registry's agents are taken in name order (a registry admission kept within the
 * budget gets all it asks for).
 */
export function shardBudgets(
  parts: ReadonlyMap<string, CompiledPart>,
  shards: number,
  budget = PATTERN_BUDGET,
): number[] {
  const out = new Array<number>(shards).fill(0);
  let left = budget;
  for (const [name, { part }] of parts) {
    if (!part.enabled) continue;
    for (const pattern of part.rules.patterns) {
      const { charge } = patternCharge(pattern);
      if (charge > left) continue;
      left -= charge;
      out[shardOf(name, shards)]! += charge;
    }
  }
  return out;
}

/** Links one shard. */
export function linkShard(parts: readonly AgentPart[], budget: number, shards: number): RouterImage {
  return linkRouterImage(parts, {
    patternBudget: budget,
    // A registry of several shards is past TRAINED_AGENTS_MAX: its classifiers are counted.
    trained: shards === 1,
    // The dense rows' memory is shared out between the shards.
    denseCellLimit: Math.floor(DENSE_CELL_LIMIT / shards),
  });
}
