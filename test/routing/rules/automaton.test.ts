import { describe, expect, it } from "vitest";
import {
  type Automaton,
  buildAutomaton,
  classOfUnit,
  deepNext,
  KELVIN,
  packAutomaton,
  SPACE_CLASS,
  stateOfCode,
  unpackAutomaton,
} from "../../../src/routing/rules/automaton";
import { prng } from "./reference-matcher";

/** Every (entry, end index) the automaton reports, without whitespace collapsing (no spaces used). */
function occurrences(a: Automaton, text: string): string[] {
  const found: string[] = [];
  let code = 0;
  for (let i = 0; i < text.length; i++) {
    const cls = classOfUnit(a, text.charCodeAt(i));
    const next = code < a.denseStates * a.classCount ? a.dense[code + cls]! : deepNext(a, code, cls);
    code = next < 0 ? ~next : next;
    const state = stateOfCode(a, code);
    expect(next < 0).toBe(a.outFirst[state]! >= 0);
    for (let s = a.outFirst[state]!; s >= 0; s = a.dictLink[s]!) found.push(`${a.stateEntry[s]}@${i}`);
  }
  return found.sort();
}

/** An automaton's fields with typed arrays as plain arrays (to compare values, not widths). */
function plain(fields: object): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(fields).map(([k, v]) => [k, ArrayBuffer.isView(v) ? Array.from(v as Int32Array) : v]),
  );
}

function naive(entries: string[], text: string): string[] {
  const found: string[] = [];
  const lower = text.toLowerCase();
  entries.forEach((entry, id) => {
    for (let at = lower.indexOf(entry); at >= 0; at = lower.indexOf(entry, at + 1))
      found.push(`${id}@${at + entry.length - 1}`);
  });
  return found.sort();
}

describe("buildAutomaton", () => {
  it("finds every occurrence of every entry, overlapping ones included, dense and sparse alike", () => {
    const rand = prng(3);
    const alphabet = ["a", "b", "c", "退", "款"];
    for (let round = 0; round < 50; round++) {
      const entries = [
        ...new Set(
          Array.from({ length: 1 + rand.int(12) }, () =>
            Array.from({ length: 1 + rand.int(4) }, () => rand.pick(alphabet)).join(""),
          ),
        ),
      ];
      const dense = buildAutomaton(entries);
      const sparse = buildAutomaton(entries, 0);
      const partly = buildAutomaton(entries, 3 * dense.classCount);
      expect(dense.denseStates).toBe(dense.stateCount);
      expect(sparse.denseStates).toBe(1);
      for (let n = 0; n < 20; n++) {
        const text = Array.from({ length: rand.int(30) }, () => rand.pick([...alphabet, "A", "B", "x"])).join("");
        const expected = naive(entries, text);
        expect(occurrences(dense, text), `${entries} in ${text}`).toEqual(expected);
        expect(occurrences(sparse, text), `${entries} in ${text}`).toEqual(expected);
        expect(occurrences(partly, text), `${entries} in ${text}`).toEqual(expected);
      }
    }
  });

  it("folds into one class exactly the units that a case-insensitive u regex equates with an ASCII letter or digit", () => {
    const ascii = "abcdefghijklmnopqrstuvwxyz0123456789";
    const a = buildAutomaton([ascii]);
    expect(a.classOf[0x20]).toBe(SPACE_CLASS);
    for (const char of ascii) {
      const regex = new RegExp(char, "iu");
      const cls = a.classOf[char.charCodeAt(0)];
      for (let unit = 0; unit < 65536; unit++) {
        const same = a.classOf[unit] === cls;
        if (same !== regex.test(String.fromCharCode(unit))) expect.fail(`U+${unit.toString(16)} vs ${char}`);
      }
    }
  });

  it("maps every whitespace unit to the space class and unknown units to class 0", () => {
    const a = buildAutomaton(["a b"]);
    for (const unit of [0x09, 0x0a, 0x0d, 0x20, 0xa0, 0x2003, 0x3000, 0xfeff])
      expect(a.classOf[unit]).toBe(SPACE_CLASS);
    expect(a.classOf["z".charCodeAt(0)]).toBe(0);
  });

  it("packs to its core and unpacks to the same automaton; unpacked with fewer dense rows it finds the same", () => {
    const rand = prng(11);
    const alphabet = ["a", "b", "c", "d", "退"];
    for (let round = 0; round < 30; round++) {
      const entries = [
        ...new Set(
          Array.from({ length: 1 + rand.int(20) }, () =>
            Array.from({ length: 1 + rand.int(5) }, () => rand.pick(alphabet)).join(""),
          ),
        ),
      ];
      const built = buildAutomaton(entries, rand.int(2) === 0 ? undefined : 4 * (2 + alphabet.length));
      const packed = packAutomaton(built);
      expect(Object.keys(packed)).not.toContain("dense");
      const unpacked = unpackAutomaton(packed);
      const { classOf: shortMap, memoryBytes: _a, ...rest } = unpacked;
      const { classOf: fullMap, memoryBytes: _b, ...builtRest } = built;
      // The same values, in 16 bits where they fit (all of them here).
      expect(plain(rest)).toEqual(plain(builtRest));
      expect(unpacked.dense).toBeInstanceOf(Int16Array);
      expect(unpacked.fail).toBeInstanceOf(Int16Array);
      // The class map ends after its last entry unit, narrow; whitespace past it is still class 1.
      expect(shortMap).toBeInstanceOf(Uint8Array);
      expect(shortMap.length).toBeLessThanOrEqual("退".charCodeAt(0) + 1);
      expect(Array.from({ length: 65536 }, (_, u) => classOfUnit(unpacked, u))).toEqual([...fullMap]);
      const sparse = unpackAutomaton(packed, 1);
      expect(sparse.denseStates).toBe(1);
      for (let n = 0; n < 10; n++) {
        const text = Array.from({ length: rand.int(30) }, () => rand.pick([...alphabet, "A", "x"])).join("");
        expect(occurrences(sparse, text), `${entries} in ${text}`).toEqual(naive(entries, text));
      }
    }
  });

  it("keeps the Kelvin sign's class apart: an unpacked map ends after the entries' units, and K still reads as k", () => {
    const entries = ["kb", "ok"];
    const unpacked = unpackAutomaton(packAutomaton(buildAutomaton(entries)));
    expect(unpacked.classOf.length).toBeLessThanOrEqual(0x80);
    expect(classOfUnit(unpacked, KELVIN)).toBe(classOfUnit(unpacked, "k".charCodeAt(0)));
    expect(classOfUnit(unpacked, KELVIN)).not.toBe(0);
    const text = "o\u212ab OK \u212AB";
    expect(occurrences(unpacked, text)).toEqual(["0@2", "0@8", "1@1", "1@5"].sort());
  });

  it("trims the deepest dense rows when that lets every code fit 16 bits, and stays 32-bit when it would cost more", () => {
    // Every 2-letter word, and each followed by q or r: 2,055 states on 28 classes.
    const letters = "abcdefghijklmnopqrstuvwxyz";
    const entries: string[] = [];
    for (const x of letters) for (const y of letters) entries.push(x + y, `${x}${y}q`, `${x}${y}r`);
    const built = buildAutomaton(entries);
    expect(built.denseStates).toBe(built.stateCount);
    // Every state dense: codes up to stateCount × classCount, past 16 bits.
    expect(built.stateCount * built.classCount).toBeGreaterThan(0x7fff);
    const fit = Math.floor((0x8000 - built.stateCount) / (built.classCount - 1));
    const packed = packAutomaton(built);
    // Asked for a few rows more than fit: trimmed to what fits, 16-bit.
    const trimmed = unpackAutomaton(packed, fit + 3);
    expect(trimmed.denseStates).toBe(fit);
    expect(trimmed.dense).toBeInstanceOf(Int16Array);
    // Asked for all of them: trimming would drop more than an eighth, so 32-bit rows for all.
    const wide = unpackAutomaton(packed);
    expect(wide.denseStates).toBe(built.stateCount);
    expect(wide.dense).toBeInstanceOf(Int32Array);
    const rand = prng(5);
    for (let n = 0; n < 40; n++) {
      const text = Array.from({ length: rand.int(40) }, () => rand.pick([...letters, "Q", "z"])).join("");
      const expected = naive(entries, text);
      expect(occurrences(trimmed, text), text).toEqual(expected);
      expect(occurrences(wide, text), text).toEqual(expected);
    }
  });
});
