/**
 * How a linked shard is kept and sent (docs/scaling.md, "How a version is stored"): in
 * sections, so that a route can be answered from the few sections its input needs.
 *
 * - **head**: the rule tier's image (its automaton without the rows rebuilt on unpacking) and
 *   the classifier's per-example arrays; every route reads it.
 * - **buckets**: the classifier's features — each one's term or character-gram key, idf, model
 *   row and postings — grouped by a hash of the feature. An input's features fall in few of
 *   them (a few dozen words hit about one bucket in twenty of a large shard), so a route that
 *   reads only its own buckets reads a small share of the shard.
 * - **texts**: the examples' texts, in chunks (only an explanation reads them, a few examples of
 *   one agent); **agents**: the agents' descriptions (the fallback and the LLM tier read them).
 *
 * `decodeShard` joins every section back into the image that was linked (the same arrays, in
 * the same order). `sliceShard` joins the head and some buckets into an image whose classifier
 * knows only their features: it decides any input whose features all fall in those buckets
 * exactly as the whole image does, since a route reads nothing of a feature it does not have.
 */

import type { ClassifierImage } from "./classifier/classifier-link";
import type { TextFeatures } from "./classifier/features";
import type { ModelImage } from "./classifier/softmax";
import {
  bucketCount,
  type ClassifierRest,
  encodeBuckets,
  gramHash,
  joinFeatures,
  type Slab,
  slabsOf,
  termHash,
} from "./feature-buckets";
import { packValue, unpackValue } from "./image-pack";
import type { RouteAgent, RouterImage } from "./router-image";
import type { RuleImage } from "./rules";

/** Examples per texts chunk. */
export const TEXTS_PER_CHUNK = 64;

/** A shard's image in sections (each a row of storage). */
export interface ShardSections {
  head: Uint8Array;
  agents: Uint8Array;
  texts: Uint8Array[];
  buckets: Uint8Array[];
}

/** What a classifier image holds besides its features and texts. */
export interface ClassifierHead {
  /** Its agents, when they are not the rule tier's (they always are: the enabled agents in order). */
  agents: string[] | null;
  trained: boolean;
  unseenIdf: number;
  exampleAgent: Uint32Array;
  agentStart: Uint32Array;
  /** The model's agents, whether its rows are dense, and whether its agent ids need 32 bits. */
  modelAgents: number;
  dense: boolean;
  wide: boolean;
  features: number;
  examples: number;
  /**
   * The counted model kept beside a trained one (registries small enough to train), whole:
   * its rows are by feature id, so a slice takes the rows of its own features. Null beside a
   * counted model, and in heads stored before it existed (undefined).
   */
  counted?: ModelImage | null;
}

/** The head section: what every route reads. */
export interface ShardHead {
  rules: RuleImage;
  exampleCounts: Int32Array;
  classifier: ClassifierHead | null;
  /** Number of buckets (a power of two). */
  buckets: number;
}

const align8 = (n: number) => (n + 7) & ~7;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const json = (value: unknown) => encoder.encode(JSON.stringify(value));
const parsed = <T>(bytes: Uint8Array): T => JSON.parse(decoder.decode(bytes)) as T;

/** Splits a linked shard into its sections. */
export function encodeShard(image: RouterImage): ShardSections {
  const c = image.classifier;
  const features = c === null ? 0 : c.idf.length;
  const buckets = bucketCount(features);
  const head: ShardHead = {
    rules: image.rules,
    exampleCounts: image.exampleCounts,
    buckets,
    classifier:
      c === null
        ? null
        : {
            agents: sameList(c.agents, image.rules.tables.names) ? null : c.agents,
            trained: c.trained,
            unseenIdf: c.unseenIdf,
            exampleAgent: c.exampleAgent,
            agentStart: c.agentStart,
            modelAgents: c.model.agentCount,
            dense: c.model.start === null,
            wide: c.model.agent instanceof Uint32Array,
            features,
            examples: c.texts.length,
            counted: c.counted ?? null,
          },
  };
  const texts: Uint8Array[] = [];
  for (let i = 0; i < (c?.texts.length ?? 0); i += TEXTS_PER_CHUNK)
    texts.push(json(c!.texts.slice(i, i + TEXTS_PER_CHUNK)));
  return {
    head: packValue(head),
    agents: json(image.agents),
    texts,
    buckets: c === null ? [] : encodeBuckets(c, buckets),
  };
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** The classifier image's fields a join keeps as they are. */
function restOf(head: ShardHead, c: ClassifierHead, texts: string[]): ClassifierRest {
  return {
    agents: c.agents ?? head.rules.tables.names,
    trained: c.trained,
    unseenIdf: c.unseenIdf,
    exampleAgent: c.exampleAgent,
    agentStart: c.agentStart,
    texts,
    modelAgents: c.modelAgents,
    dense: c.dense,
    wide: c.wide,
  };
}

/** The head section, unpacked. */
export function readHead(bytes: Uint8Array): ShardHead {
  return unpackValue<ShardHead>(bytes);
}

/** The whole image from every section. */
export function decodeShard(sections: ShardSections): RouterImage {
  const head = readHead(sections.head);
  const c = head.classifier;
  let classifier: ClassifierImage | null = null;
  if (c !== null) {
    const slabs = slabsOf(sections.buckets, c);
    const slabOf = new Uint32Array(c.features);
    const indexOf = new Uint32Array(c.features);
    for (const [k, s] of slabs.entries()) {
      for (let i = 0; i < s.n; i++) {
        slabOf[s.id(i)] = k;
        indexOf[s.id(i)] = i;
      }
    }
    const texts = sections.texts.flatMap((chunk) => parsed<string[]>(chunk));
    classifier = { ...joinFeatures(restOf(head, c, texts), slabs, slabOf, indexOf), counted: c.counted ?? null };
  }
  return {
    agents: parsed<RouteAgent[]>(sections.agents),
    rules: head.rules,
    classifier,
    exampleCounts: head.exampleCounts,
  };
}

/**
 * An image that decides `features`' input as the whole shard does, from the buckets they fall
 * in (`bucketsOf`; a bucket missing holds none of them): its classifier knows the input's own
 * features and no other, and a route reads nothing of a feature its input does not have. Its
 * agent list is empty, and its texts are empty strings until `fillTexts` puts in place the
 * chunks an explanation reads (the classifier reads them when it explains).
 */
export function sliceShard(
  head: ShardHead,
  buckets: ReadonlyMap<number, Uint8Array>,
  features: TextFeatures,
): RouterImage {
  const c = head.classifier;
  const image: RouterImage = { agents: [], rules: head.rules, classifier: null, exampleCounts: head.exampleCounts };
  if (c === null) return image;
  const numbers = [...buckets.keys()];
  const read = slabsOf([...buckets.values()], c);
  const slabs = new Map(numbers.map((b, k) => [b, read[k]!]));
  const found: [id: number, slab: Slab, index: number][] = [];
  const look = (hash: number, term: string | null, key: number) => {
    const slab = slabs.get(hash & (head.buckets - 1));
    if (slab === undefined) return;
    const i = slab.find(hash, term, key);
    if (i >= 0) found.push([slab.id(i), slab, i]);
  };
  for (const { term } of features.terms) look(termHash(term), term, 0);
  for (const key of features.grams) look(gramHash(key), null, key);
  for (const key of features.phrase) look(gramHash(key), null, key);
  found.sort((x, y) => x[0] - y[0]);
  const list = [...new Set(found.map((f) => f[1]))];
  const slabOf = Uint32Array.from(found, (f) => list.indexOf(f[1]));
  const indexOf = Uint32Array.from(found, (f) => f[2]);
  const joined = joinFeatures(restOf(head, c, new Array<string>(c.examples).fill("")), list, slabOf, indexOf);
  const counted = c.counted
    ? sliceModel(
        c.counted,
        found.map((f) => f[0]),
      )
    : null;
  image.classifier = { ...joined, counted };
  return image;
}

/** The rows of `ids` (in that order) of a model: the model a slice's features take ids 0, 1, … in. */
function sliceModel(model: ModelImage, ids: readonly number[]): ModelImage {
  const a = model.agentCount;
  if (model.start === null) {
    const w = new Float32Array(ids.length * a);
    for (let j = 0; j < ids.length; j++) w.set(model.w.subarray(ids[j]! * a, (ids[j]! + 1) * a), j * a);
    return { agentCount: a, w, start: null, agent: null };
  }
  const { start: from, agent: agentOf } = model;
  const start = new Uint32Array(ids.length + 1);
  for (let j = 0; j < ids.length; j++) start[j + 1] = start[j]! + (from[ids[j]! + 1]! - from[ids[j]!]!);
  const w = new Float32Array(start[ids.length]!);
  const agent =
    agentOf === null ? null : agentOf instanceof Uint32Array ? new Uint32Array(w.length) : new Uint16Array(w.length);
  for (let j = 0; j < ids.length; j++) {
    const f = ids[j]!;
    w.set(model.w.subarray(from[f]!, from[f + 1]!), start[j]!);
    agent?.set(agentOf!.subarray(from[f]!, from[f + 1]!), start[j]!);
  }
  return { agentCount: a, w, start, agent };
}

/** The texts chunks holding agent `a`'s examples (its index among the shard's enabled agents). */
export function textChunksOf(head: ShardHead, a: number): number[] {
  const c = head.classifier;
  if (c === null) return [];
  const from = c.agentStart[a]!;
  const to = c.agentStart[a + 1]!;
  const out: number[] = [];
  for (let k = Math.floor(from / TEXTS_PER_CHUNK); k * TEXTS_PER_CHUNK < to; k++) out.push(k);
  return out;
}

/** Puts texts chunks (by chunk number) into a sliced image's texts. */
export function fillTexts(image: RouterImage, chunks: ReadonlyMap<number, Uint8Array>): void {
  const texts = image.classifier?.texts;
  if (texts === undefined) return;
  for (const [k, bytes] of chunks) {
    for (const [i, text] of parsed<string[]>(bytes).entries()) texts[k * TEXTS_PER_CHUNK + i] = text;
  }
}

/** The agents section, read. */
export function readAgents(bytes: Uint8Array): RouteAgent[] {
  return parsed<RouteAgent[]>(bytes);
}

/** A shard's sections as one buffer (what an isolate's load receives): a table of lengths, then each 8-aligned. */
export function packSections(s: ShardSections): Uint8Array {
  const all = [s.head, s.agents, ...s.texts, ...s.buckets];
  const table = new Uint32Array(2 + all.length);
  table[0] = s.texts.length;
  table[1] = s.buckets.length;
  for (const [i, section] of all.entries()) table[2 + i] = section.byteLength;
  let size = align8(table.byteLength);
  for (const section of all) size = align8(size + section.byteLength);
  const out = new Uint8Array(size);
  out.set(new Uint8Array(table.buffer));
  let at = align8(table.byteLength);
  for (const section of all) {
    out.set(section, at);
    at = align8(at + section.byteLength);
  }
  return out;
}

/** The sections of a packed shard, as views on it. */
export function unpackSections(bytes: Uint8Array): ShardSections {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const texts = view.getUint32(0, true);
  const buckets = view.getUint32(4, true);
  const count = 2 + texts + buckets;
  let at = align8(4 * (2 + count));
  const all: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const length = view.getUint32(4 * (2 + i), true);
    all.push(bytes.subarray(at, at + length));
    at = align8(at + length);
  }
  return { head: all[0]!, agents: all[1]!, texts: all.slice(2, 2 + texts), buckets: all.slice(2 + texts) };
}
