/**
 * Where each row of a CSR array starts, in about a byte a row (docs/scaling.md, "Memory"): a
 * counted model's rows (the agents holding a feature) are short, so each row's length fits a
 * byte, and every 16th start is kept in full; a start is the nearer mark plus or minus at most 8
 * lengths. Rows longer than 255 keep their starts as they are (narrowed, narrow.ts).
 */
import { narrowIndex } from "./narrow";

const SPAN = 16;

/** Row starts: row i is [at(i), at(i) + count(i)). One class, so a route's calls stay monomorphic. */
export class RowStarts {
  /** Rows (one less than the starts given). */
  readonly rows: number;
  /** Each row's length, or null when the starts are kept as they are. */
  private readonly lengths: Uint8Array | null;
  /** Every SPAN-th start (all of them when `lengths` is null), and the last. */
  private readonly marks: Uint8Array | Uint16Array | Uint32Array;

  /** The starts `start` (rows + 1 of them, ascending) as compactly as their rows' lengths allow. */
  constructor(start: Uint8Array | Uint16Array | Uint32Array) {
    const rows = start.length - 1;
    this.rows = rows;
    let longest = 0;
    for (let i = 0; i < rows; i++) longest = Math.max(longest, start[i + 1]! - start[i]!);
    if (longest > 0xff) {
      this.lengths = null;
      this.marks = narrowIndex(start);
      return;
    }
    const lengths = new Uint8Array(rows);
    for (let i = 0; i < rows; i++) lengths[i] = start[i + 1]! - start[i]!;
    // Marks at 0, SPAN, 2·SPAN, …, and the end, so every row has a mark on either side.
    const marks = new Uint32Array(Math.ceil(rows / SPAN) + 1);
    for (let k = 0; k * SPAN < rows; k++) marks[k] = start[k * SPAN]!;
    marks[marks.length - 1] = start[rows]!;
    this.lengths = lengths;
    this.marks = narrowIndex(marks);
  }

  at(i: number): number {
    const lengths = this.lengths;
    if (lengths === null) return this.marks[i]!;
    const k = (i / SPAN) | 0;
    const from = k * SPAN;
    if (i - from <= SPAN / 2 || k + 1 === this.marks.length - 1) {
      let s = this.marks[k]!;
      for (let j = from; j < i; j++) s += lengths[j]!;
      return s;
    }
    // Nearer the next mark: count back from it.
    let s = this.marks[k + 1]!;
    for (let j = i; j < from + SPAN; j++) s -= lengths[j]!;
    return s;
  }

  count(i: number): number {
    const lengths = this.lengths;
    return lengths === null ? this.marks[i + 1]! - this.marks[i]! : lengths[i]!;
  }

  get byteLength(): number {
    return (this.lengths?.byteLength ?? 0) + this.marks.byteLength;
  }
}
