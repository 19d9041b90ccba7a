/**
 * A route decided from a stored router version without loading it (docs/scaling.md, "The first
 * route of a fresh isolate"): every shard's head, and of its classifier only the buckets the
 * input's features fall in (router-codec.ts). The decision is the one the loaded router makes —
 * a route reads nothing of a feature its input does not have — and it costs a few per cent of
 * the version's bytes: what the router object answers while an isolate loads the version.
 */
import { extractFeatures } from "./classifier/features";
import { classifierFromImage } from "./classifier/lexical-classifier";
import { bucketsOf } from "./feature-buckets";
import { fillTexts, type ShardHead, sliceShard, textChunksOf } from "./router-codec";
import type { RouterImage } from "./router-image";
import { routerFromShards } from "./rule-router";
import { type CompiledRuleSet, rulesFromImage } from "./rules";
import type { RuleDecision } from "./types";

/** A shard's head with its rules wrapped: kept while the shard stands. */
export interface PreparedShard {
  head: ShardHead;
  rules: CompiledRuleSet;
}

/** A shard's head prepared: its automaton with the root's row only (cheap to build, and fine for short inputs). */
export function prepareShard(head: ShardHead): PreparedShard {
  return { head, rules: rulesFromImage(head.rules, { sparse: true }) };
}

/** What a route reads of a stored version besides the heads, synchronously. */
export interface SectionSource {
  /** For each shard, the buckets asked for (by number; a bucket missing holds nothing). */
  buckets(wanted: ReadonlyMap<number, readonly number[]>): Map<number, Map<number, Uint8Array>>;
  /** Texts chunks of one shard, by chunk number. */
  texts(shard: number, chunks: readonly number[]): Map<number, Uint8Array>;
}

/**
 * The rule tier's decision for `input` over the shards of one stored version, as plain data
 * (its explanation read). The buckets are read before anything awaits; the explanation's texts
 * after the decision, which may wait for turns of the lane (heavy pattern work): null when
 * `current()` says the version was replaced meanwhile (decide again).
 */
export async function decideFromSections(
  input: string,
  shards: readonly PreparedShard[],
  source: SectionSource,
  current: () => boolean,
): Promise<RuleDecision | null> {
  const features = extractFeatures(input);
  const wanted = new Map<number, number[]>();
  shards.forEach(({ head }, k) => {
    if (head.classifier !== null) wanted.set(k, bucketsOf(features, head.buckets));
  });
  const read = source.buckets(wanted);
  const images: RouterImage[] = shards.map(({ head }, k) => sliceShard(head, read.get(k) ?? new Map(), features));
  const router = routerFromShards(
    images.map((image, k) => ({
      image: { agents: image.agents, names: image.rules.tables.names, exampleCounts: image.exampleCounts },
      rules: shards[k]!.rules,
      classifier: image.classifier === null ? null : classifierFromImage(image.classifier, { liveTexts: true }),
      // One route's slice, never held: its size is not counted.
      bytes: 0,
    })),
  );
  const decision = await router.decideInTurns(input);
  if (!current()) return null;
  const best = decision.candidates[0]?.agent;
  if (best !== undefined) {
    for (const [k, { head }] of shards.entries()) {
      const a = head.rules.tables.names.indexOf(best);
      if (a < 0) continue;
      fillTexts(images[k]!, source.texts(k, textChunksOf(head, a)));
      break;
    }
  }
  // The spread reads the explanation (built when first read) into a property of its own.
  return { ...decision };
}
