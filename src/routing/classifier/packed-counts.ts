/**
 * Small counts in 2 or 4 bits each when they fit (docs/scaling.md, "Memory"): a counted model's
 * entries (how many of an agent's examples hold a feature) and a posting's term count are
 * nearly all 1 to 3 when agents have a few examples each.
 */

/** Counts (0–255) packed as narrow as the largest allows: 2, 4 or 8 bits each. */
export class PackedCounts {
  // Read by hot loops directly (softmax.ts), as `at` does.
  readonly data: Uint8Array;
  /** log2 of the counts a byte holds. */
  readonly indexShift: number;
  /** log2 of the bits a count takes. */
  readonly bitShift: number;
  readonly mask: number;
  readonly length: number;

  constructor(counts: Uint8Array) {
    let most = 0;
    for (let i = 0; i < counts.length; i++) if (counts[i]! > most) most = counts[i]!;
    const bits = most <= 3 ? 2 : most <= 15 ? 4 : 8;
    this.bitShift = bits === 2 ? 1 : bits === 4 ? 2 : 3;
    this.indexShift = 3 - this.bitShift;
    this.mask = (1 << bits) - 1;
    this.length = counts.length;
    if (bits === 8) this.data = counts;
    else {
      this.data = new Uint8Array(Math.ceil((counts.length * bits) / 8));
      const perByte = 1 << this.indexShift;
      for (let i = 0; i < counts.length; i++)
        this.data[i >>> this.indexShift]! |= counts[i]! << ((i & (perByte - 1)) << this.bitShift);
    }
  }

  /** Count i. */
  at(i: number): number {
    return (this.data[i >>> this.indexShift]! >>> ((i & ((1 << this.indexShift) - 1)) << this.bitShift)) & this.mask;
  }

  get byteLength(): number {
    return this.data.byteLength;
  }
}
