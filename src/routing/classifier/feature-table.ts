/**
 * A wrapped classifier's vocabulary in typed arrays (docs/scaling.md, "Memory"): every feature
 * of a shard — terms and integer-keyed features (character grams, phrase features) — found by
 * one numeric key. A term's key is 2^50 plus 48 bits of hash of its text, clear of the integer
 * keys (grams below 2^48, pairs at 2^48, the length at 2^49, see features.ts), so the table
 * holds no strings: its keys by id (8 bytes a feature) and an open-addressed index of ids (2 or 4
 * bytes a slot, at most 3/4 full).
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

/** The 32-bit hash a key is placed by. */
function slotHash(key: number): number {
  const h = Math.imul((key | 0) ^ Math.floor(key / 4294967296), 0x9e3779b1);
  return (h ^ (h >>> 15)) >>> 0;
}

export class FeatureTable {
  /** Feature id → its key. */
  private readonly keys: Float64Array;
  /** Slot → id + 1 (0: empty). */
  private readonly slots: Uint16Array | Uint32Array;
  private readonly size: number;
  /** Terms whose key another term of the vocabulary shares: by text (rare). */
  private readonly clashed = new Map<number, Map<string, number>>();

  /**
   * `terms[id]` is the term of feature id, or "" for an integer-keyed one, whose key is then
   * `integerKey(id)`.
   */
  constructor(terms: readonly string[], integerKey: (id: number) => number) {
    const n = terms.length;
    this.keys = new Float64Array(n);
    this.size = Math.max(1, Math.ceil((n * 4) / 3));
    this.slots = n < 0xffff ? new Uint16Array(this.size) : new Uint32Array(this.size);
    for (let id = 0; id < n; id++) {
      const term = terms[id]!;
      const key = term === "" ? integerKey(id) : termKey(term);
      this.keys[id] = key;
      const held = this.find(key);
      if (held < 0) {
        this.place(key, id);
        continue;
      }
      // Another term has this key: both are looked up by text from now on.
      let texts = this.clashed.get(key);
      if (texts === undefined) {
        texts = new Map([[terms[held]!, held]]);
        this.clashed.set(key, texts);
      }
      texts.set(term, id);
    }
  }

  private place(key: number, id: number): void {
    let i = Math.floor((slotHash(key) * this.size) / 4294967296);
    while (this.slots[i] !== 0) i = i + 1 === this.size ? 0 : i + 1;
    this.slots[i] = id + 1;
  }

  private find(key: number): number {
    let i = Math.floor((slotHash(key) * this.size) / 4294967296);
    for (;;) {
      const s = this.slots[i]!;
      if (s === 0) return -1;
      if (this.keys[s - 1] === key) return s - 1;
      i = i + 1 === this.size ? 0 : i + 1;
    }
  }

  /** The id of an integer-keyed feature (a gram or phrase feature), or −1. */
  get(key: number): number {
    return this.find(key);
  }

  /** The id of a term, or −1; `key`: its termKey, when the caller has it (a route's shards share one). */
  term(term: string, key = termKey(term)): number {
    const texts = this.clashed.get(key);
    return texts === undefined ? this.find(key) : (texts.get(term) ?? -1);
  }

  /** Bytes held. */
  get byteLength(): number {
    let clashed = 0;
    for (const texts of this.clashed.values()) for (const t of texts.keys()) clashed += 2 * t.length + 64;
    return this.keys.byteLength + this.slots.byteLength + clashed;
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
