import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PackedCounts } from "../../../src/routing/classifier/packed-counts";

describe("PackedCounts", () => {
  it("reads back every count, for any counts (property)", () => {
    const counts = fc.oneof(
      fc.uint8Array({ max: 3, maxLength: 100 }),
      fc.uint8Array({ max: 15, maxLength: 100 }),
      fc.uint8Array({ maxLength: 100 }),
    );
    fc.assert(
      fc.property(counts, (c) => {
        const packed = new PackedCounts(c);
        expect(packed.length).toBe(c.length);
        expect(Array.from({ length: c.length }, (_, i) => packed.at(i))).toEqual(Array.from(c));
      }),
      { numRuns: 300 },
    );
  });

  it("takes 2 bits a count up to 3, 4 up to 15, a byte past", () => {
    expect(new PackedCounts(new Uint8Array(1000).fill(3)).byteLength).toBe(250);
    expect(new PackedCounts(Uint8Array.from({ length: 1000 }, (_, i) => (i === 7 ? 15 : 1))).byteLength).toBe(500);
    expect(new PackedCounts(Uint8Array.from({ length: 1000 }, (_, i) => (i === 7 ? 16 : 1))).byteLength).toBe(1000);
  });
});
