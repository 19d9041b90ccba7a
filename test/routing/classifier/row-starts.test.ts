import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RowStarts } from "../../../src/routing/classifier/row-starts";

/** CSR starts from row lengths. */
const startsOf = (lengths: number[]) => {
  const start = new Uint32Array(lengths.length + 1);
  lengths.forEach((n, i) => {
    start[i + 1] = start[i]! + n;
  });
  return start;
};

describe("rowStarts", () => {
  it("gives every row's start and count as the CSR starts do, for any rows (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 300 })), { maxLength: 200 }),
        (lengths) => {
          const start = startsOf(lengths);
          const rows = new RowStarts(start);
          expect(rows.rows).toBe(lengths.length);
          for (let i = 0; i < lengths.length; i++) {
            expect(rows.at(i)).toBe(start[i]);
            expect(rows.count(i)).toBe(lengths[i]);
          }
          expect(rows.at(lengths.length)).toBe(start[lengths.length]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("holds short rows in about a byte a row, and longer ones as their starts", () => {
    const short = new RowStarts(startsOf(Array.from({ length: 16_000 }, (_, i) => i % 7)));
    expect(short.byteLength).toBeLessThanOrEqual(1.125 * 16_000 + 2);
    const long = new RowStarts(startsOf([1, 256, 2]));
    expect(long.byteLength).toBe(4 * 2);
  });
});
