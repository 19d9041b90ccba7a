/**
 * A classifier image's features in buckets (docs/scaling.md, "How a version is stored"): each
 * feature — its term or character-gram key, idf, informative flag, model row and postings — in
 * the bucket its hash chooses, each bucket a slab of bytes read in place. A route reads the
 * buckets of its input's features only; a load reads them all and joins them back.
 *
 * Slab layout, 8-aligned columns after a header [features, terms, model entries, postings,
 * terms' bytes, 0]: per feature its hash, id, idf, model entries and postings; per gram its key;
 * per term where its bytes end; the model's agents (sparse models only) and weights; the
 * postings' examples and weights; per feature its informative flag; the terms' UTF-8 bytes.
 * Terms come first, then grams, each in id order.
 */

import type { ClassifierImage } from "./classifier/classifier-link";
import type { TextFeatures } from "./classifier/features";
import { IntTable } from "./classifier/int-table";

/** Features per bucket, on average: the fewer, the less a route reads and the more rows a shard keeps. */
export const FEATURES_PER_BUCKET = 8;
const MAX_BUCKETS = 4096;
const HEADER_WORDS = 6;

/** What reading a slab needs to know of its classifier: the model's form. */
export interface ModelForm {
  /** Rows of every agent's weight (no agent ids stored). */
  dense: boolean;
  /** Agent ids need 32 bits. */
  wide: boolean;
}

/** How many buckets a shard of `features` features has (a power of two). */
export function bucketCount(features: number): number {
  let buckets = 1;
  while (buckets < MAX_BUCKETS && buckets * FEATURES_PER_BUCKET < features) buckets *= 2;
  return buckets;
}

/** The hash of a term (FNV-1a of its code units); its low bits choose the bucket. */
export function termHash(term: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < term.length; i++) h = Math.imul(h ^ term.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The hash of a character gram's key. */
export function gramHash(key: number): number {
  const h = Math.imul((key | 0) ^ Math.floor(key / 4294967296), 0x9e3779b1);
  return (h ^ (h >>> 15)) >>> 0;
}

/** The buckets an input's features fall in, ascending. */
export function bucketsOf(features: TextFeatures, buckets: number): number[] {
  const hit = new Set<number>();
  for (const { term } of features.terms) hit.add(termHash(term) & (buckets - 1));
  // Phrase features (skip bigrams, the length) share the grams' integer keys and table.
  for (const key of features.grams) hit.add(gramHash(key) & (buckets - 1));
  for (const key of features.phrase) hit.add(gramHash(key) & (buckets - 1));
  return [...hit].sort((a, b) => a - b);
}

const align8 = (n: number) => (n + 7) & ~7;
const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** Byte offsets of a slab's columns (the one place the layout is written down). */
function layout(base: number, n: number, terms: number, m: number, p: number, form: ModelForm) {
  let offset = base + align8(4 * HEADER_WORDS);
  const column = (byteLength: number) => {
    const here = offset;
    offset = align8(offset + byteLength);
    return here;
  };
  const agentBytes = form.wide ? 4 : 2;
  return {
    hash: column(4 * n),
    id: column(4 * n),
    idf: column(4 * n),
    modelLen: column(4 * n),
    postLen: column(4 * n),
    gramKey: column(8 * (n - terms)),
    termEnd: column(4 * terms),
    modelAgent: column(form.dense ? 0 : agentBytes * m),
    modelW: column(4 * m),
    postDoc: column(4 * p),
    postW: column(4 * p),
    informative: column(n),
    terms: offset,
  };
}

/** A term's UTF-8 bytes (ASCII, nearly all terms, without the encoder). */
function utf8(term: string): Uint8Array {
  for (let i = 0; i < term.length; i++) if (term.charCodeAt(i) > 0x7f) return encoder.encode(term);
  const out = new Uint8Array(term.length);
  for (let i = 0; i < term.length; i++) out[i] = term.charCodeAt(i);
  return out;
}

/** The classifier's features in `buckets` slabs, written in one pass into one buffer. */
export function encodeBuckets(c: ClassifierImage, buckets: number): Uint8Array[] {
  const v = c.idf.length;
  const { start, agent, w, agentCount } = c.model;
  const form: ModelForm = { dense: start === null, wide: agent instanceof Uint32Array };
  const gramKey = new Float64Array(v).fill(-1);
  for (let i = 0; i < c.grams.keys.length; i++)
    if (c.grams.keys[i] !== -1) gramKey[c.grams.values[i]!] = c.grams.keys[i]!;
  // Each feature's place: by bucket, terms before grams, then by id (a counting sort).
  const hash = new Uint32Array(v);
  const slot = new Uint32Array(v);
  const count = new Uint32Array(2 * buckets + 1);
  const termBytes: (Uint8Array | null)[] = new Array(v).fill(null);
  for (let f = 0; f < v; f++) {
    const gram = gramKey[f]! >= 0;
    if (!gram) termBytes[f] = utf8(c.terms[f]!);
    hash[f] = gram ? gramHash(gramKey[f]!) : termHash(c.terms[f]!);
    slot[f] = 2 * (hash[f]! & (buckets - 1)) + (gram ? 1 : 0);
    count[slot[f]! + 1]!++;
  }
  for (let s = 0; s < 2 * buckets; s++) count[s + 1]! += count[s]!;
  const order = new Uint32Array(v);
  const cursor = count.slice(0, 2 * buckets);
  for (let f = 0; f < v; f++) order[cursor[slot[f]!]!++] = f;
  const modelLen = (f: number) => (start === null ? agentCount : start[f + 1]! - start[f]!);
  const postLen = (f: number) => c.offset[f + 1]! - c.offset[f]!;
  // Sizes, then one buffer for every slab.
  const at: number[] = [];
  const dims: [n: number, terms: number, m: number, p: number, bytes: number][] = [];
  let size = 0;
  for (let b = 0; b < buckets; b++) {
    const from = count[2 * b]!;
    const grams = count[2 * b + 1]!;
    const to = count[2 * b + 2]!;
    let m = 0;
    let p = 0;
    let bytes = 0;
    for (let i = from; i < to; i++) {
      const f = order[i]!;
      m += modelLen(f);
      p += postLen(f);
      if (i < grams) bytes += termBytes[f]!.byteLength;
    }
    dims.push([to - from, grams - from, m, p, bytes]);
    at.push(size);
    size = align8(layout(size, to - from, grams - from, m, p, form).terms + bytes);
  }
  const buffer = new ArrayBuffer(size);
  const u8 = new Uint8Array(buffer);
  const u16 = new Uint16Array(buffer);
  const u32 = new Uint32Array(buffer);
  const f32 = new Float32Array(buffer);
  const f64 = new Float64Array(buffer);
  const out: Uint8Array[] = [];
  for (let b = 0; b < buckets; b++) {
    const [n, terms, m, p, bytes] = dims[b]!;
    const base = at[b]!;
    const l = layout(base, n, terms, m, p, form);
    u32.set([n, terms, m, p, bytes, 0], base >>> 2);
    let e = 0;
    let q = 0;
    let t = 0;
    for (let i = 0; i < n; i++) {
      const f = order[count[2 * b]! + i]!;
      u32[(l.hash >>> 2) + i] = hash[f]!;
      u32[(l.id >>> 2) + i] = f;
      f32[(l.idf >>> 2) + i] = c.idf[f]!;
      u8[l.informative + i] = c.informative[f]!;
      const ml = modelLen(f);
      const pl = postLen(f);
      u32[(l.modelLen >>> 2) + i] = ml;
      u32[(l.postLen >>> 2) + i] = pl;
      const from = start === null ? f * agentCount : start[f]!;
      for (let j = 0; j < ml; j++, e++) {
        f32[(l.modelW >>> 2) + e] = w[from + j]!;
        if (agent === null) continue;
        if (form.wide) u32[(l.modelAgent >>> 2) + e] = agent[from + j]!;
        else u16[(l.modelAgent >>> 1) + e] = agent[from + j]!;
      }
      for (let j = c.offset[f]!; j < c.offset[f + 1]!; j++, q++) {
        u32[(l.postDoc >>> 2) + q] = c.postDoc[j]!;
        f32[(l.postW >>> 2) + q] = c.postW[j]!;
      }
      if (i < terms) {
        u8.set(termBytes[f]!, l.terms + t);
        t += termBytes[f]!.byteLength;
        u32[(l.termEnd >>> 2) + i] = t;
      } else f64[(l.gramKey >>> 3) + i - terms] = gramKey[f]!;
    }
    out.push(u8.subarray(base, l.terms + bytes));
  }
  return out;
}

/** Views on a buffer holding slabs, shared by the slabs in it. */
class SlabViews {
  readonly u32: Uint32Array;
  readonly f32: Float32Array;
  readonly f64: Float64Array;
  readonly u16: Uint16Array;
  readonly bytes: Uint8Array;
  constructor(buffer: ArrayBufferLike) {
    this.u32 = new Uint32Array(buffer, 0, buffer.byteLength >>> 2);
    this.f32 = new Float32Array(buffer, 0, buffer.byteLength >>> 2);
    this.f64 = new Float64Array(buffer, 0, buffer.byteLength >>> 3);
    this.u16 = new Uint16Array(buffer, 0, buffer.byteLength >>> 1);
    this.bytes = new Uint8Array(buffer);
  }
}

/**
 * Slabs as read from their sections: views on the sections' buffer when they share one at
 * 8-byte boundaries (a packed shard), else on one copy of them all (rows read from storage).
 */
export function slabsOf(sections: readonly Uint8Array[], form: ModelForm): Slab[] {
  const buffer = sections[0]?.buffer;
  if (sections.every((b) => b.buffer === buffer && b.byteOffset % 8 === 0)) {
    const views = new SlabViews(buffer ?? new ArrayBuffer(0));
    return sections.map((b) => new Slab(views, b.byteOffset, form));
  }
  let size = 0;
  for (const b of sections) size = align8(size + b.byteLength);
  const joined = new Uint8Array(size);
  const at: number[] = [];
  size = 0;
  for (const b of sections) {
    joined.set(b, size);
    at.push(size);
    size = align8(size + b.byteLength);
  }
  const views = new SlabViews(joined.buffer);
  return at.map((offset) => new Slab(views, offset, form));
}

/** One bucket's features, read in place. */
export class Slab {
  readonly n: number;
  readonly termCount: number;
  private readonly v: SlabViews;
  private readonly agents: Uint16Array | Uint32Array;
  /** Where the columns start: element indexes into the views of their type. */
  private readonly hashAt: number;
  private readonly idAt: number;
  private readonly idfAt: number;
  private readonly modelLenAt: number;
  private readonly postLenAt: number;
  private readonly gramKeyAt: number;
  private readonly termEndAt: number;
  private readonly modelAgentAt: number;
  private readonly modelWAt: number;
  private readonly postDocAt: number;
  private readonly postWAt: number;
  private readonly flagsAt: number;
  private readonly termsAt: number;
  private modelStart: Uint32Array | null = null;
  private postStart: Uint32Array | null = null;

  constructor(views: SlabViews, base: number, form: ModelForm) {
    this.v = views;
    this.agents = form.wide ? views.u32 : views.u16;
    const w = base >>> 2;
    const u32 = views.u32;
    this.n = u32[w]!;
    this.termCount = u32[w + 1]!;
    const l = layout(base, this.n, this.termCount, u32[w + 2]!, u32[w + 3]!, form);
    this.hashAt = l.hash >>> 2;
    this.idAt = l.id >>> 2;
    this.idfAt = l.idf >>> 2;
    this.modelLenAt = l.modelLen >>> 2;
    this.postLenAt = l.postLen >>> 2;
    this.gramKeyAt = (l.gramKey >>> 3) - this.termCount;
    this.termEndAt = l.termEnd >>> 2;
    this.modelAgentAt = form.wide ? l.modelAgent >>> 2 : l.modelAgent >>> 1;
    this.modelWAt = l.modelW >>> 2;
    this.postDocAt = l.postDoc >>> 2;
    this.postWAt = l.postW >>> 2;
    this.flagsAt = l.informative;
    this.termsAt = l.terms;
  }

  id(i: number): number {
    return this.v.u32[this.idAt + i]!;
  }
  idf(i: number): number {
    return this.v.f32[this.idfAt + i]!;
  }
  informative(i: number): number {
    return this.v.bytes[this.flagsAt + i]!;
  }
  modelLen(i: number): number {
    return this.v.u32[this.modelLenAt + i]!;
  }
  postLen(i: number): number {
    return this.v.u32[this.postLenAt + i]!;
  }
  /** Gram i's key (i ≥ termCount). */
  gramKey(i: number): number {
    return this.v.f64[this.gramKeyAt + i]!;
  }
  term(i: number): string {
    const from = i === 0 ? 0 : this.v.u32[this.termEndAt + i - 1]!;
    const to = this.v.u32[this.termEndAt + i]!;
    return decoder.decode(this.v.bytes.subarray(this.termsAt + from, this.termsAt + to));
  }
  modelAgent(e: number): number {
    return this.agents[this.modelAgentAt + e]!;
  }
  modelW(e: number): number {
    return this.v.f32[this.modelWAt + e]!;
  }
  postDoc(e: number): number {
    return this.v.u32[this.postDocAt + e]!;
  }
  postW(e: number): number {
    return this.v.f32[this.postWAt + e]!;
  }

  /** Where feature i's model entries start (i = n: their end). */
  modelAt(i: number): number {
    this.modelStart ??= this.sums(this.modelLenAt);
    return this.modelStart[i]!;
  }

  postAt(i: number): number {
    this.postStart ??= this.sums(this.postLenAt);
    return this.postStart[i]!;
  }

  private sums(at: number): Uint32Array {
    const out = new Uint32Array(this.n + 1);
    for (let i = 0; i < this.n; i++) out[i + 1] = out[i]! + this.v.u32[at + i]!;
    return out;
  }

  /** The feature of this slab with this term (or, with `term` null, this gram key), or −1. */
  find(hash: number, term: string | null, key: number): number {
    const from = term === null ? this.termCount : 0;
    const to = term === null ? this.n : this.termCount;
    for (let i = from; i < to; i++) {
      if (this.v.u32[this.hashAt + i] !== hash) continue;
      if (term === null ? this.gramKey(i) === key : this.term(i) === term) return i;
    }
    return -1;
  }
}

/** The classifier image's own fields besides its features (what joining slabs leaves as it is). */
export type ClassifierRest = Pick<
  ClassifierImage,
  "agents" | "trained" | "unseenIdf" | "exampleAgent" | "agentStart" | "texts"
> & { modelAgents: number } & ModelForm;

/**
 * A classifier image of the chosen features (slab, index), which must be in id order: with
 * every feature of the shard, the image that was linked; with some, an image in which they
 * take ids 0, 1, … in that order.
 */
export function joinFeatures(
  rest: ClassifierRest,
  slabs: readonly Slab[],
  slabOf: Uint32Array,
  indexOf: Uint32Array,
): ClassifierImage {
  const total = slabOf.length;
  const terms = new Array<string>(total);
  const grams = new IntTable(256);
  const idf = new Float32Array(total);
  const informative = new Uint8Array(total);
  const offset = new Uint32Array(total + 1);
  const modelStart = new Uint32Array(total + 1);
  for (let f = 0; f < total; f++) {
    const s = slabs[slabOf[f]!]!;
    const i = indexOf[f]!;
    if (i < s.termCount) terms[f] = s.term(i);
    else {
      terms[f] = "";
      grams.set(s.gramKey(i), f);
    }
    idf[f] = s.idf(i);
    informative[f] = s.informative(i);
    offset[f + 1] = offset[f]! + s.postLen(i);
    modelStart[f + 1] = modelStart[f]! + s.modelLen(i);
  }
  const postDoc = new Uint32Array(offset[total]!);
  const postW = new Float32Array(offset[total]!);
  const w = new Float32Array(modelStart[total]!);
  const agent = rest.dense ? null : rest.wide ? new Uint32Array(w.length) : new Uint16Array(w.length);
  // Rows are short (a few agents, a few examples): copied by hand, not through subarrays.
  for (let f = 0; f < total; f++) {
    const s = slabs[slabOf[f]!]!;
    const i = indexOf[f]!;
    for (let from = s.postAt(i), to = offset[f]!, end = s.postAt(i + 1); from < end; from++, to++) {
      postDoc[to] = s.postDoc(from);
      postW[to] = s.postW(from);
    }
    for (let from = s.modelAt(i), to = modelStart[f]!, end = s.modelAt(i + 1); from < end; from++, to++) {
      w[to] = s.modelW(from);
      if (agent !== null) agent[to] = s.modelAgent(from);
    }
  }
  const { modelAgents, dense, wide: _wide, ...own } = rest;
  return {
    ...own,
    terms,
    grams: grams.image(),
    model: { agentCount: modelAgents, w, start: dense ? null : modelStart, agent },
    idf,
    informative,
    offset,
    postDoc,
    postW,
  };
}
