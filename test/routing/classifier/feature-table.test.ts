import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FeatureTable, termKey } from "../../../src/routing/classifier/feature-table";
import { gramKey, lengthKey } from "../../../src/routing/classifier/features";

describe("FeatureTable", () => {
  const terms = ["refund", "", "card", "", "退款"];
  const keys = [0, gramKey(0x61, 0x62, 0x63), 0, lengthKey(3), 0];
  const { table, order } = FeatureTable.build(terms, (id) => keys[id]!);

  it("numbers the terms first, then the integer-keyed features, and says which feature each id was", () => {
    expect(table.termCount).toBe(3);
    expect([table.term("refund"), table.term("card"), table.term("退款")].sort()).toEqual([0, 1, 2]);
    expect([table.get(gramKey(0x61, 0x62, 0x63)), table.get(lengthKey(3))].sort()).toEqual([3, 4]);
    expect(order[table.term("refund")]).toBe(0);
    expect(order[table.term("card")]).toBe(2);
    expect(order[table.term("退款")]).toBe(4);
    expect(order[table.get(gramKey(0x61, 0x62, 0x63))]).toBe(1);
    expect(order[table.get(lengthKey(3))]).toBe(3);
  });

  it("answers −1 for what no example holds", () => {
    expect(table.term("invoice")).toBe(-1);
    expect(table.get(gramKey(0x78, 0x79, 0x7a))).toBe(-1);
    expect(table.get(lengthKey(4))).toBe(-1);
  });

  it("keys terms clear of the integer keys (grams, pairs and the length sit below 2^50)", () => {
    for (const term of ["a", "refund", "退款", ""]) expect(termKey(term)).toBeGreaterThanOrEqual(2 ** 50);
    expect(termKey("refund")).not.toBe(termKey("refunds"));
    expect(Number.isSafeInteger(termKey("refund"))).toBe(true);
  });

  it("finds what a map of keys finds, for any vocabulary (property)", () => {
    // Integer keys as features.ts makes them: grams below 2^48, pairs at 2^48, the length at 2^49.
    const integerKey = fc.oneof(
      fc.integer({ min: 0, max: 2 ** 48 - 1 }),
      fc.integer({ min: 0, max: 2 ** 48 - 1 }).map((k) => 2 ** 48 + k),
      fc.integer({ min: 0, max: 64 }).map((k) => 2 ** 49 + k),
    );
    const word = fc.string({ minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(
        fc.uniqueArray(word, { maxLength: 300 }),
        fc.uniqueArray(integerKey, { maxLength: 300 }),
        fc.array(word, { maxLength: 20 }),
        fc.array(integerKey, { maxLength: 20 }),
        fc.integer({ min: 0, max: 1000 }),
        (words, ints, askedWords, askedInts, seed) => {
          // Terms and integer-keyed features interleaved, as a link numbers them.
          const vocabulary: string[] = [];
          const integerOf = new Map<number, number>();
          let w = 0;
          let i = 0;
          for (let k = seed; w < words.length || i < ints.length; k = (k * 1103515245 + 12345) & 0x7fffffff) {
            if (i >= ints.length || (w < words.length && k % 2 === 0)) vocabulary.push(words[w++]!);
            else {
              integerOf.set(vocabulary.length, ints[i++]!);
              vocabulary.push("");
            }
          }
          const built = FeatureTable.build(vocabulary, (id) => integerOf.get(id)!);
          expect(built.table.termCount).toBe(words.length);
          expect(new Set(built.order).size).toBe(vocabulary.length);
          const termIds = new Map(vocabulary.flatMap((t, id) => (t === "" ? [] : [[t, id] as const])));
          const intIds = new Map([...integerOf].map(([id, key]) => [key, id]));
          for (const t of [...words, ...askedWords]) {
            const id = built.table.term(t);
            if (!termIds.has(t)) expect(id).toBe(-1);
            else {
              expect(id).toBeLessThan(words.length);
              expect(built.order[id]).toBe(termIds.get(t));
            }
          }
          for (const key of [...ints, ...askedInts]) {
            const id = built.table.get(key);
            if (!intIds.has(key)) expect(id).toBe(-1);
            else {
              expect(id).toBeGreaterThanOrEqual(words.length);
              expect(built.order[id]).toBe(intIds.get(key));
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("holds under 7 bytes a feature at a large shard's size, and finds every feature", () => {
    const many = Array.from({ length: 20_000 }, (_, i) => (i % 3 === 0 ? "" : `term${i}`));
    const big = FeatureTable.build(many, (id) => gramKey(id & 0xffff, id >>> 16, 7));
    expect(big.table.byteLength).toBeLessThan(7 * many.length);
    for (let id = 0; id < many.length; id += 97) {
      const found = many[id] === "" ? big.table.get(gramKey(id & 0xffff, id >>> 16, 7)) : big.table.term(many[id]!);
      expect(big.order[found]).toBe(id);
    }
    expect(big.table.term("term0")).toBe(-1);
  });
});
