/**
 * The neighbour index's posting weights as what they were computed from (docs/scaling.md,
 * "Memory"): the link weighs term t in example d (classifier-link.ts) as
 * (1 + ln tf) × idf(t) / ‖d‖, rounded to float32. The idf comes from the postings, so a wrapped
 * classifier can keep each example's norm (8 bytes an example) and each posting's count (2 bits
 * while counts stay below 4, packed-counts.ts; nothing when every count is 1) instead of 4 bytes
 * a posting, and compute a weight as read.
 *
 * The counts and norms are recovered from the weights: within an example, the ratio weight / idf
 * is (1 + ln tf) / ‖d‖, so the least ratio is a count of 1 when the example has one. They are kept
 * only when every weight they give back is the stored one, bit for bit; else the weights stay
 * (e.g. an image sliced to a route's features, whose examples lack terms the norm counted).
 */

import { PackedCounts } from "./packed-counts";

/** 1 + ln tf for every count a posting can have, as the link computes it: a read, not a log. */
const TF_SCALE = new Float64Array(256);
for (let tf = 1; tf < 256; tf++) TF_SCALE[tf] = 1 + Math.log(tf);

/**
 * Posting weights, stored or computed (one class, not closures: a route reads a weight per
 * posting it walks, and one shape keeps that call inlined).
 */
export class PostingWeights {
  private constructor(
    private readonly stored: Float32Array | null,
    private readonly norms: Float64Array,
    private readonly counts: PackedCounts | null,
  ) {}

  /**
   * The weights over their counts and norms when those give every weight back, else over the
   * weights themselves. `offset`/`postDoc`: the postings of each term, in CSR form;
   * `idfOf(t)`: as the link computed it.
   */
  static of(
    postW: Float32Array,
    offset: ArrayLike<number>,
    postDoc: ArrayLike<number>,
    examples: number,
    idfOf: (t: number) => number,
  ): PostingWeights {
    const derived = derive(postW, offset, postDoc, examples, idfOf);
    if (derived === null) return new PostingWeights(postW, new Float64Array(0), null);
    const counts = derived.counts === null ? null : new PackedCounts(derived.counts);
    return new PostingWeights(null, derived.norms, counts);
  }

  /** The weight of posting p, of example d and of a term with inverse document frequency `idf` (idfOf). */
  weight(p: number, d: number, idf: number): number {
    if (this.stored !== null) return this.stored[p]!;
    const scaled = this.counts === null ? idf : TF_SCALE[this.counts.at(p)]! * idf;
    return Math.fround(scaled / this.norms[d]!);
  }

  get byteLength(): number {
    return (this.stored?.byteLength ?? 0) + this.norms.byteLength + (this.counts?.byteLength ?? 0);
  }
}

function derive(
  postW: Float32Array,
  offset: ArrayLike<number>,
  postDoc: ArrayLike<number>,
  examples: number,
  idfOf: (t: number) => number,
): { norms: Float64Array; counts: Uint8Array | null } | null {
  const terms = offset.length - 1;
  const postings = postW.length;
  // Each example's postings: the least ratio weight / idf, then the counts, then the norm.
  const idfOfPost = new Float64Array(postings);
  const least = new Float64Array(examples).fill(Number.POSITIVE_INFINITY);
  for (let t = 0; t < terms; t++) {
    const idf = idfOf(t);
    for (let p = offset[t]!; p < offset[t + 1]!; p++) {
      idfOfPost[p] = idf;
      const d = postDoc[p]!;
      const ratio = postW[p]! / idf;
      if (ratio < least[d]!) least[d] = ratio;
    }
  }
  const counts = new Uint8Array(postings);
  const sums = new Float64Array(examples);
  let allOnes = true;
  for (let p = 0; p < postings; p++) {
    const d = postDoc[p]!;
    const tf = Math.round(Math.exp(postW[p]! / idfOfPost[p]! / least[d]! - 1));
    if (!(tf >= 1 && tf <= 255)) return null;
    counts[p] = tf;
    if (tf !== 1) allOnes = false;
    const w = (1 + Math.log(tf)) * idfOfPost[p]!;
    sums[d] = sums[d]! + w * w;
  }
  const norms = new Float64Array(examples);
  for (let d = 0; d < examples; d++) norms[d] = Math.sqrt(sums[d]!) || 1;
  for (let p = 0; p < postings; p++) {
    const w = Math.fround(((1 + Math.log(counts[p]!)) * idfOfPost[p]!) / norms[postDoc[p]!]!);
    if (w !== postW[p]) return null;
  }
  return { norms, counts: allOnes ? null : counts };
}
