import { describe, expect, it } from "vitest";
import { narrowIndex, TextTable } from "../../../src/routing/classifier/narrow";

describe("narrowIndex", () => {
  it("keeps every value in the narrowest unsigned type that holds the largest", () => {
    const small = narrowIndex(Uint32Array.from([0, 7, 255]));
    expect(small).toBeInstanceOf(Uint8Array);
    expect([...small]).toEqual([0, 7, 255]);
    const middle = narrowIndex(Uint32Array.from([1, 65_535]));
    expect(middle).toBeInstanceOf(Uint16Array);
    expect([...middle]).toEqual([1, 65_535]);
    const wide = Uint32Array.from([65_536]);
    expect(narrowIndex(wide)).toBe(wide);
  });
});

describe("TextTable", () => {
  it("gives each text back as it was, any script, empty ones too", () => {
    const texts = ["I want a refund", "", "我要退款", "Überweisung fehlgeschlagen"];
    const table = new TextTable(texts);
    expect(texts.map((_, i) => table.at(i))).toEqual(texts);
    expect(table.at(4)).toBe("");
    expect(table.byteLength).toBeLessThan(texts.join("").length * 3 + 8);
  });
});
