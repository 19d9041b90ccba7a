import { describe, expect, it } from "vitest";
import { sortRange } from "../../../src/routing/rules/typed-sort";
import { prng } from "./reference-matcher";

describe("sortRange", () => {
  it("sorts ranges of random, sorted, reversed and repetitive data like the built-in sort", () => {
    const rand = prng(13);
    for (let n = 0; n < 300; n++) {
      const length = rand.int(300);
      const kind = rand.int(4);
      const values = Array.from({ length }, (_, i) =>
        kind === 0 ? rand.int(1e6) : kind === 1 ? i : kind === 2 ? length - i : rand.int(3),
      );
      const a = Float64Array.from(values);
      sortRange(a, 0, length);
      expect(Array.from(a)).toEqual([...values].sort((x, y) => x - y));
      const b = Int32Array.from(values);
      const from = rand.int(length + 1);
      sortRange(b, from, length);
      expect(Array.from(b.subarray(0, from))).toEqual(values.slice(0, from));
      expect(Array.from(b.subarray(from))).toEqual(values.slice(from).sort((x, y) => x - y));
    }
  });

  it("with keepFrom, puts the largest values in order at the end", () => {
    const rand = prng(14);
    for (let n = 0; n < 300; n++) {
      const length = 1 + rand.int(400);
      const values = Array.from({ length }, () => rand.int(50));
      const a = Float64Array.from(values);
      const keep = rand.int(Math.min(length, 10) + 1);
      sortRange(a, 0, length, length - keep);
      expect(Array.from(a.subarray(length - keep))).toEqual([...values].sort((x, y) => x - y).slice(length - keep));
      expect([...a].sort((x, y) => x - y)).toEqual([...values].sort((x, y) => x - y));
    }
  });
});
