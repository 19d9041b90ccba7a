import { describe, expect, it } from "vitest";
import { IntScratchSet, IntTable } from "../../../src/routing/classifier/int-table";

describe("IntTable", () => {
  it("stores and finds keys through growth, small and beyond 2^32", () => {
    const t = new IntTable(2);
    const keys = Array.from({ length: 5000 }, (_, i) => (i % 2 === 0 ? i * 7919 : 2 ** 40 + i * 65537));
    for (const [i, k] of keys.entries()) t.set(k, i);
    expect(t.size).toBe(keys.length);
    for (const [i, k] of keys.entries()) expect(t.get(k)).toBe(i);
  });

  it("answers −1 for absent keys", () => {
    const t = new IntTable();
    t.set(42, 1);
    expect(t.get(43)).toBe(-1);
    expect(t.get(42 + 2 ** 33)).toBe(-1);
  });
});

describe("IntScratchSet", () => {
  it("reports first insertions, forgets everything on clear, and survives growth", () => {
    const s = new IntScratchSet(2);
    expect(s.add(5)).toBe(true);
    expect(s.add(5)).toBe(false);
    for (let i = 0; i < 1000; i++) s.add(2 ** 35 + i);
    expect(s.add(5)).toBe(false);
    expect(s.add(2 ** 35 + 999)).toBe(false);
    s.clear();
    expect(s.add(5)).toBe(true);
    expect(s.add(2 ** 35)).toBe(true);
  });
});
