/**
 * Index arrays in the narrowest unsigned type their values fit (docs/scaling.md, "Memory"): a
 * shard's offsets, agent ids and example numbers rarely pass 65,535, and a wrapped classifier
 * holds one of each per feature or posting.
 */

/** `a` itself when it is already narrow, else a copy in Uint8Array, Uint16Array or Uint32Array. */
export function narrowIndex(a: Uint8Array | Uint16Array | Uint32Array): Uint8Array | Uint16Array | Uint32Array {
  let max = 0;
  for (let i = 0; i < a.length; i++) if (a[i]! > max) max = a[i]!;
  const bytes = max <= 0xff ? 1 : max <= 0xffff ? 2 : 4;
  if (bytes >= a.BYTES_PER_ELEMENT) return a;
  return bytes === 1 ? Uint8Array.from(a) : Uint16Array.from(a);
}

/** A string table: texts as one UTF-8 buffer and where each ends, read one at a time. */
export class TextTable {
  private readonly bytes: Uint8Array;
  private readonly ends: Uint8Array | Uint16Array | Uint32Array;
  readonly length: number;

  constructor(texts: readonly string[]) {
    const encoder = new TextEncoder();
    const parts = texts.map((t) => encoder.encode(t));
    const ends = new Uint32Array(parts.length);
    let size = 0;
    for (const [i, p] of parts.entries()) ends[i] = size += p.byteLength;
    this.bytes = new Uint8Array(size);
    for (const [i, p] of parts.entries()) this.bytes.set(p, ends[i]! - p.byteLength);
    this.ends = narrowIndex(ends);
    this.length = texts.length;
  }

  /** Text i ("" past the end). */
  at(i: number): string {
    if (i < 0 || i >= this.length) return "";
    return new TextDecoder().decode(this.bytes.subarray(i === 0 ? 0 : this.ends[i - 1]!, this.ends[i]!));
  }

  get byteLength(): number {
    return this.bytes.byteLength + this.ends.byteLength;
  }
}
