/**
 * A growable open-addressing hash table from non-negative integer keys (< 2^53) to ids, in
 * typed arrays. Character-gram lookups are most of a route's feature lookups, and a probe over
 * a Float64Array costs a fraction of a Map.get.
 */
/** An IntTable's arrays (what a stored router keeps). */
export interface IntTableImage {
  keys: Float64Array;
  values: Int32Array;
  count: number;
}

export class IntTable {
  private keys: Float64Array;
  private values: Int32Array;
  private mask: number;
  private count = 0;

  /** A table over an image's arrays (no copy). */
  static fromImage(image: IntTableImage): IntTable {
    const table = new IntTable(1);
    table.keys = image.keys;
    table.values = image.values;
    table.mask = image.keys.length - 1;
    table.count = image.count;
    return table;
  }

  /** The table's arrays, shared (the table must not change afterwards). */
  image(): IntTableImage {
    return { keys: this.keys, values: this.values, count: this.count };
  }

  constructor(capacity = 1024) {
    let size = 16;
    while (size < capacity * 2) size *= 2;
    this.keys = new Float64Array(size).fill(-1);
    this.values = new Int32Array(size);
    this.mask = size - 1;
  }

  /** Number of keys stored. */
  get size(): number {
    return this.count;
  }

  /** Bytes held by the table. */
  get byteLength(): number {
    return this.keys.byteLength + this.values.byteLength;
  }

  private slot(key: number): number {
    // Fold the high bits in so keys ≥ 2^32 spread too, then a multiplicative hash.
    const h = Math.imul((key | 0) ^ Math.floor(key / 4294967296), 0x9e3779b1);
    return (h ^ (h >>> 15)) & this.mask;
  }

  /** The id stored for key, or −1. */
  get(key: number): number {
    let i = this.slot(key);
    for (;;) {
      const k = this.keys[i] as number;
      if (k === key) return this.values[i] as number;
      if (k === -1) return -1;
      i = (i + 1) & this.mask;
    }
  }

  /** Stores key → value (the key must not be present yet). */
  set(key: number, value: number): void {
    if ((this.count + 1) * 2 > this.mask + 1) this.grow();
    let i = this.slot(key);
    while ((this.keys[i] as number) !== -1) i = (i + 1) & this.mask;
    this.keys[i] = key;
    this.values[i] = value;
    this.count++;
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldValues = this.values;
    this.keys = new Float64Array(oldKeys.length * 2).fill(-1);
    this.values = new Int32Array(oldKeys.length * 2);
    this.mask = this.keys.length - 1;
    this.count = 0;
    for (let i = 0; i < oldKeys.length; i++) {
      const k = oldKeys[i] as number;
      if (k !== -1) this.set(k, oldValues[i] as number);
    }
  }
}

/**
 * A reusable set of non-negative integers, cleared in O(1) by bumping a generation: the
 * per-route "seen this gram already?" check, without allocating a Set per route.
 */
export class IntScratchSet {
  private keys: Float64Array;
  private stamps: Uint32Array;
  private mask: number;
  private generation = 1;
  private count = 0;

  constructor(capacity = 256) {
    let size = 16;
    while (size < capacity * 2) size *= 2;
    this.keys = new Float64Array(size);
    this.stamps = new Uint32Array(size);
    this.mask = size - 1;
  }

  /** Empties the set. */
  clear(): void {
    this.count = 0;
    this.generation = (this.generation + 1) >>> 0;
    if (this.generation === 0) {
      this.stamps.fill(0);
      this.generation = 1;
    }
  }

  /** Adds key; true when it was not there yet. */
  add(key: number): boolean {
    if ((this.count + 1) * 2 > this.mask + 1) this.grow();
    const h = Math.imul((key | 0) ^ Math.floor(key / 4294967296), 0x9e3779b1);
    let i = (h ^ (h >>> 15)) & this.mask;
    while (this.stamps[i] === this.generation) {
      if (this.keys[i] === key) return false;
      i = (i + 1) & this.mask;
    }
    this.stamps[i] = this.generation;
    this.keys[i] = key;
    this.count++;
    return true;
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldStamps = this.stamps;
    const live = this.generation;
    this.keys = new Float64Array(oldKeys.length * 2);
    this.stamps = new Uint32Array(oldKeys.length * 2);
    this.mask = this.keys.length - 1;
    this.generation = 1;
    this.count = 0;
    for (let i = 0; i < oldKeys.length; i++) if (oldStamps[i] === live) this.add(oldKeys[i] as number);
  }
}
