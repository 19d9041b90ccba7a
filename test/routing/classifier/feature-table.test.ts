import { describe, expect, it } from "vitest";
import { FeatureTable, termKey } from "../../../src/routing/classifier/feature-table";
import { gramKey, lengthKey } from "../../../src/routing/classifier/features";

describe("FeatureTable", () => {
  const terms = ["refund", "", "card", "", "退款"];
  const keys = [0, gramKey(0x61, 0x62, 0x63), 0, lengthKey(3), 0];
  const table = new FeatureTable(terms, (id) => keys[id]!);

  it("finds each term and each integer-keyed feature by its id", () => {
    expect(table.term("refund")).toBe(0);
    expect(table.term("card")).toBe(2);
    expect(table.term("退款")).toBe(4);
    expect(table.get(gramKey(0x61, 0x62, 0x63))).toBe(1);
    expect(table.get(lengthKey(3))).toBe(3);
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

  it("holds 14 bytes a feature or less: keys, and slots at most 3/4 full", () => {
    const many = Array.from({ length: 10_000 }, (_, i) => `term${i}`);
    const big = new FeatureTable(many, () => 0);
    expect(big.byteLength).toBeLessThanOrEqual(14 * many.length);
    for (let i = 0; i < many.length; i += 997) expect(big.term(`term${i}`)).toBe(i);
  });
});
