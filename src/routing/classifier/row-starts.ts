/**
 * Where each row of a CSR array starts, in about a byte a row (docs/scaling.md, "Memory"): a
 * counted model's rows (the agents holding a feature) are short, so each row's length fits a
 * byte, and every 16th start is kept in full; a start is its mark plus at most 15 lengths.
 * Rows longer than 255 keep their starts as they are (narrowed, narrow.ts).
 */
import { narrowIndex } from "./narrow";

/** Row starts: row i is [at(i), at(i) + count(i)). */
export interface RowStarts {
  at(i: number): number;
  count(i: number): number;
  /** Rows (one less than the starts given). */
  readonly rows: number;
  readonly byteLength: number;
}

const SPAN = 16;

/** The starts `start` (rows + 1 of them, ascending) as compactly as their rows' lengths allow. */
export function rowStarts(start: Uint8Array | Uint16Array | Uint32Array): RowStarts {
  const rows = start.length - 1;
  let longest = 0;
  for (let i = 0; i < rows; i++) longest = Math.max(longest, start[i + 1]! - start[i]!);
  if (longest > 0xff) return plainStarts(narrowIndex(start));
  const counts = new Uint8Array(rows);
  for (let i = 0; i < rows; i++) counts[i] = start[i + 1]! - start[i]!;
  // A loop, not a callback: a closure over `start` would share the returned ones' context and keep it alive.
  const every = new Uint32Array(Math.floor(rows / SPAN) + 1);
  for (let k = 0; k < every.length; k++) every[k] = start[k * SPAN]!;
  const marks = narrowIndex(every);
  return {
    at(i) {
      let s = marks[(i / SPAN) | 0]!;
      for (let j = i - (i % SPAN); j < i; j++) s += counts[j]!;
      return s;
    },
    count: (i) => counts[i]!,
    rows,
    byteLength: counts.byteLength + marks.byteLength,
  };
}

function plainStarts(start: Uint8Array | Uint16Array | Uint32Array): RowStarts {
  return {
    at: (i) => start[i]!,
    count: (i) => start[i + 1]! - start[i]!,
    rows: start.length - 1,
    byteLength: start.byteLength,
  };
}
