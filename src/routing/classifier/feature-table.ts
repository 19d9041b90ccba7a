/**
 * A wrapped classifier's vocabulary in typed arrays (docs/scaling.md, "Memory"): every feature
 * of a shard — terms and integer-keyed features (character grams, phrase features) — found by
 * one numeric key. A term's key is 2^50 plus 48 bits of hash of its text, clear of the integer
 * keys (grams below 2^48, pairs at 2^48, the length at 2^49, see features.ts), so the table
 * holds no strings.
 *
 * The table numbers the features itself: terms first, then the integer-keyed ones, each part in
 * buckets by the top bits of its keys' mixed value (`KeyBuckets`). A feature's place is its id,
 * so no index of ids is kept, and only the bits of a key its bucket does not tell: 5 bytes a
 * feature and the buckets' starts (about 1 byte a feature) instead of an 8-byte key and a slot.
 * The classifier renumbers its per-feature arrays to match (`order`).
 *
 * Two terms of one vocabulary that share a key are kept apart exactly (their texts in a small
 * map); a term no example holds finds one with odds of about features / 2^48 per lookup
 * (3 × 10⁻¹¹ for a shard of 10,000 features): a route's word counted as one it never saw.
 */
import { mix, stemHashes } from "./features";

const TERM_BASE = 2 ** 50;

/** The key of a term: 2^50 plus 48 bits of hash of its text. */
export function termKey(term: string): number {
  const [a, b] = stemHashes(term);
  return TERM_BASE + mix(a ^ Math.imul(b, 0x27d4eb2f)) * 65536 + (mix(b ^ 0x5bd1e995) & 0xffff);
}

const TWO_32 = 4294967296;

/** The mixed value of the last key given to `mixKey`: its top 20 bits and its low 32. */
let mixedHi = 0;
let mixedLo = 0;

/**
 * An invertible mix of a key below 2^52 (two Feistel rounds over its top 20 and low 32 bits), so
 * that distinct keys stay distinct and any key's top bits are evenly spread over the buckets.
 */
function mixKey(key: number): void {
  const hi = Math.floor(key / TWO_32);
  mixedLo = (key ^ Math.imul(hi, 0x9e3779b1)) >>> 0;
  mixedHi = (hi ^ (mix(mixedLo) >>> 12)) & 0xfffff;
}

/** The number of bits that count n − 1 (0 for n ≤ 1). */
const bitsFor = (n: number) => (n <= 1 ? 0 : 32 - Math.clz32(n - 1));

/**
 * Keys below 2^52 in 2^b buckets by the top b bits of their mixed value: a key is its bucket,
 * its low 32 mixed bits and the 20 − b bits left. With about 2 keys a bucket (b ≥ 12, so the
 * bits left fit a byte, from 2^11 keys) a lookup mixes the key and compares a few entries.
 */
class KeyBuckets {
  private readonly shift: number;
  private readonly starts: Uint16Array | Uint32Array;
  private readonly lo: Uint32Array;
  private readonly rest: Uint8Array | Uint16Array | Uint32Array;

  /** Places keys[ids[k]] for every k; order[at + place] is then the id at each place. */
  constructor(keys: Float64Array, ids: readonly number[], order: Uint32Array, at: number) {
    const n = ids.length;
    const bits = Math.min(20, Math.max(bitsFor(n) - 2, Math.min(12, bitsFor(n))));
    this.shift = 20 - bits;
    const buckets = 2 ** bits;
    this.starts = n < 0xffff ? new Uint16Array(buckets + 1) : new Uint32Array(buckets + 1);
    this.lo = new Uint32Array(n);
    this.rest = this.shift <= 8 ? new Uint8Array(n) : this.shift <= 16 ? new Uint16Array(n) : new Uint32Array(n);
    const bucketOf = new Uint32Array(n);
    for (let k = 0; k < n; k++) {
      mixKey(keys[ids[k]!]!);
      bucketOf[k] = mixedHi >>> this.shift;
      this.starts[bucketOf[k]! + 1]!++;
    }
    for (let b = 0; b < buckets; b++) this.starts[b + 1]! += this.starts[b]!;
    // A counting sort: within a bucket, keys keep the order they were given in.
    const cursor = Uint32Array.from(this.starts.subarray(0, buckets));
    const mask = (1 << this.shift) - 1;
    for (let k = 0; k < n; k++) {
      const place = cursor[bucketOf[k]!]!++;
      mixKey(keys[ids[k]!]!);
      this.lo[place] = mixedLo;
      this.rest[place] = mixedHi & mask;
      order[at + place] = ids[k]!;
    }
  }

  /** The place of a key (the first of its bucket's entries with it), or −1. */
  find(key: number): number {
    // mixKey's two rounds, in locals: a route looks up every feature of its input in every shard.
    const hi = Math.floor(key / TWO_32);
    const lo = (key ^ Math.imul(hi, 0x9e3779b1)) >>> 0;
    const top = (hi ^ (mix(lo) >>> 12)) & 0xfffff;
    const bucket = top >>> this.shift;
    const rest = top & ((1 << this.shift) - 1);
    const end = this.starts[bucket + 1]!;
    for (let i = this.starts[bucket]!; i < end; i++) if (this.lo[i] === lo && this.rest[i] === rest) return i;
    return -1;
  }

  get byteLength(): number {
    return this.starts.byteLength + this.lo.byteLength + this.rest.byteLength;
  }
}

/** A vocabulary's table, and how it numbered the features. */
export interface BuiltFeatureTable {
  table: FeatureTable;
  /** order[id] is the id the feature had in the vocabulary given (`terms`). */
  order: Uint32Array;
}

export class FeatureTable {
  /** Terms are ids 0 … termCount − 1; integer-keyed features follow them. */
  readonly termCount: number;
  readonly size: number;
  private readonly terms: KeyBuckets;
  private readonly integers: KeyBuckets;
  /** Terms whose key another term of the vocabulary shares: by text (rare). */
  private readonly clashed: Map<number, Map<string, number>>;

  private constructor(
    termCount: number,
    size: number,
    terms: KeyBuckets,
    integers: KeyBuckets,
    clashed: Map<number, Map<string, number>>,
  ) {
    this.termCount = termCount;
    this.size = size;
    this.terms = terms;
    this.integers = integers;
    this.clashed = clashed;
  }

  /**
   * The table of a vocabulary: `terms[id]` is the term of feature id, or "" for an
   * integer-keyed one, whose key is then `integerKey(id)`.
   */
  static build(terms: readonly string[], integerKey: (id: number) => number): BuiltFeatureTable {
    const n = terms.length;
    const keys = new Float64Array(n);
    const termIds: number[] = [];
    const integerIds: number[] = [];
    for (let id = 0; id < n; id++) {
      const term = terms[id]!;
      keys[id] = term === "" ? integerKey(id) : termKey(term);
      (term === "" ? integerIds : termIds).push(id);
    }
    const order = new Uint32Array(n);
    const termTable = new KeyBuckets(keys, termIds, order, 0);
    const integerTable = new KeyBuckets(keys, integerIds, order, termIds.length);
    // Terms that share a key with another: both are looked up by text from now on.
    const clashed = new Map<number, Map<string, number>>();
    for (let id = 0; id < termIds.length; id++) {
      const key = keys[order[id]!]!;
      const first = termTable.find(key);
      if (first === id) continue;
      let texts = clashed.get(key);
      if (texts === undefined) {
        texts = new Map([[terms[order[first]!]!, first]]);
        clashed.set(key, texts);
      }
      texts.set(terms[order[id]!]!, id);
    }
    return { table: new FeatureTable(termIds.length, n, termTable, integerTable, clashed), order };
  }

  /** The id of an integer-keyed feature (a gram or phrase feature), or −1. */
  get(key: number): number {
    const place = this.integers.find(key);
    return place < 0 ? -1 : this.termCount + place;
  }

  /** The id of a term, or −1; `key`: its termKey, when the caller has it (a route's shards share one). */
  term(term: string, key = termKey(term)): number {
    const texts = this.clashed.size === 0 ? undefined : this.clashed.get(key);
    return texts === undefined ? this.terms.find(key) : (texts.get(term) ?? -1);
  }

  /** Bytes held. */
  get byteLength(): number {
    let clashed = 0;
    for (const texts of this.clashed.values()) for (const t of texts.keys()) clashed += 2 * t.length + 64;
    return this.terms.byteLength + this.integers.byteLength + clashed;
  }
}

/** The term keys of an input's features, computed once for all the shards a route asks. */
const keysOf = new WeakMap<object, Float64Array>();

/** The termKey of each of `terms`, cached on the array (a route's features are one object). */
export function termKeys(terms: readonly { term: string }[]): Float64Array {
  let keys = keysOf.get(terms);
  if (keys === undefined) {
    keys = Float64Array.from(terms, (t) => termKey(t.term));
    keysOf.set(terms, keys);
  }
  return keys;
}
