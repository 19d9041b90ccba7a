import { describe, expect, it } from "vitest";
import { PATTERN_FLAGS } from "../../../src/routing/rules/pattern-safety";
import {
  ClassTable,
  compileVerifier,
  PredicateTable,
  resumePoint,
  searchFrom,
  type VerifierTables,
  verifyAt,
} from "../../../src/routing/rules/pattern-verifier";
import { prng } from "./reference-matcher";

/** One pattern's program and tables, or null when the engine does not run it. */
function compiled(source: string): { code: number[]; tables: VerifierTables } | null {
  const classes = new ClassTable();
  const predicates = new PredicateTable();
  const code = compileVerifier(source, { classes, predicates });
  if (code === null) return null;
  return {
    code,
    tables: { code: Int32Array.from(code), classes: classes.toArray(), predicates: predicates.toArray() },
  };
}

function verifier(source: string): ((text: string, pos: number) => boolean) | null {
  const c = compiled(source);
  return c && ((text, pos) => verifyAt(c.tables, 0, text, pos));
}

/**
 * Compares the verifier with V8's sticky regex at every position of every text, except inside a
 * surrogate pair (V8 backs a `u` regex up to the pair's start there; the scanner only ever asks
 * at the start of an ASCII factor).
 */
function agrees(source: string, texts: string[]): void {
  const verify = verifier(source);
  expect(verify, source).not.toBeNull();
  const sticky = new RegExp(source, `${PATTERN_FLAGS}y`);
  for (const text of texts) {
    for (let pos = 0; pos <= text.length; pos++) {
      if (/[\uDC00-\uDFFF]/.test(text[pos] ?? "") && /[\uD800-\uDBFF]/.test(text[pos - 1] ?? "")) continue;
      sticky.lastIndex = pos;
      const expected = sticky.test(text);
      if (verify!(text, pos) !== expected)
        expect.fail(`${source} at ${pos} of ${JSON.stringify(text)}: V8 says ${expected}`);
    }
  }
}

const SAMPLES = [
  "order #123456",
  "ORDER123456",
  "Refund it",
  "ſtatus kilo \u212Ailo",
  "a\nb",
  "x\u2028y",
  "tab\there",
  "nbsp\u00a0x",
  "😀order😀",
  "under_score",
  "[brackets] and ^carets^",
  "A-z `mixed`",
  "",
  "  ",
  "\u0000nul",
  "end.",
];

describe("pattern verifier", () => {
  it.each([
    "order\\s*#?\\d{6}",
    "(refund|return)\\s+\\w+",
    "tk12-\\d{3,5}",
    "\\bvip(?:ing|ed)?\\b",
    "^order",
    "order$",
    "\\Bder",
    "[a-c]+",
    "[^a-z ]",
    "[A-z]",
    "[\\d_]+",
    "[\\s.]",
    "[-a]",
    "[a-]",
    "[\\]\\[]",
    ".",
    "..",
    "\\D\\W\\S",
    "(?<name>or)der",
    "o(?:r|R){1,2}d",
    "x*?y",
    "(?:a?)*b",
    "\\n|\\t",
    "\\0",
    "[^]",
    "[]",
    "k",
    "s",
    "K",
    "S",
    "\\w{2}",
    "(?:)",
    "|x",
  ])("agrees with V8 on %s", (source) => {
    agrees(source, SAMPLES);
  });

  it.each([
    "\\p{L}+",
    "\\P{L}",
    "\\x41",
    "\\u0041",
    "\\u{1F600}",
    "é",
    "É",
    "[é]",
    "[^é]",
    "[\\D]",
    "\\cA",
    "[\\b]",
    "😀",
    "重复扣款",
    "ß",
    "[α-ω]+",
    "Ω",
  ])("agrees with V8 on %s (predicates: one code point, V8's own folding and properties)", (source) => {
    agrees(source, [...SAMPLES, "ÉTÉ été", "重复扣款了", "ΑΒΓ αβγ Ω ω \u2126", "straße STRASSE ẞ", "\u0001A"]);
  });

  it.each(["a(?=b)", "(?<=a)b", "(a)\\1", "(?<n>a)\\k<n>", "(?i:a)"])(
    "refuses %s (admission names the construct)",
    (source) => {
      expect(verifier(source)).toBeNull();
    },
  );

  it("refuses patterns whose quantifiers expand past the instruction cap", () => {
    expect(verifier("(?:abcdef){200}")).toBeNull();
    expect(verifier("a{1,5}")).not.toBeNull();
  });

  it("agrees with V8 on random patterns and inputs", () => {
    const rand = prng(31);
    const atoms = [
      "a",
      "B",
      "s",
      "k",
      "-",
      "#",
      " ",
      "\\d",
      "\\D",
      "\\w",
      "\\W",
      "\\s",
      "\\S",
      ".",
      "[a-c]",
      "[^b]",
      "[A-z]",
      "[\\s\\d]",
      "\\b",
      "\\B",
      "\\.",
      "_",
    ];
    const quantifiers = ["", "", "", "?", "*", "+", "{2}", "{0,2}", "{1,}", "+?", "??"];
    const pattern = (depth: number): string =>
      Array.from({ length: 1 + rand.int(4) }, () => {
        if (depth < 2 && rand.int(4) === 0) {
          const body = Array.from({ length: 1 + rand.int(3) }, () => pattern(depth + 1)).join("|");
          return `(?:${body})${rand.pick(quantifiers)}`;
        }
        const atom = rand.pick(atoms);
        return atom.startsWith("\\b") || atom.startsWith("\\B") ? atom : atom + rand.pick(quantifiers);
      }).join("");
    const chars = [
      "a",
      "A",
      "b",
      "B",
      "s",
      "S",
      "ſ",
      "k",
      "K",
      "\u212A",
      "1",
      " ",
      "\n",
      "\u00a0",
      "-",
      "#",
      "_",
      ".",
      "😀",
      "é",
    ];
    const texts = Array.from({ length: 40 }, () =>
      Array.from({ length: rand.int(7) }, () => rand.pick(chars)).join(""),
    );
    let checked = 0;
    for (let n = 0; n < 400; n++) {
      const source = (rand.int(5) === 0 ? "^" : "") + pattern(0) + (rand.int(5) === 0 ? "$" : "");
      try {
        new RegExp(source, PATTERN_FLAGS);
      } catch {
        continue;
      }
      if (verifier(source) === null) continue;
      agrees(source, texts);
      checked++;
    }
    expect(checked).toBeGreaterThan(300);
  });
});

describe("resumePoint", () => {
  const program = (source: string): number[] => compiled(source)!.code;

  it("skips the straight run of the factor's characters, and a checked leading \\b", () => {
    expect(resumePoint(program("order\\s*\\d"), "order", false)).toBe(5);
    expect(resumePoint(program("ORDER\\s*\\d"), "order", false)).toBe(5);
    expect(resumePoint(program("\\border\\b"), "order", true)).toBe(6);
    expect(resumePoint(program("colou?r"), "colo", false)).toBe(4);
  });

  it("gives 0 when the program does not start with exactly that run", () => {
    expect(resumePoint(program("\\border"), "order", false)).toBe(0);
    expect(resumePoint(program("^order"), "order", false)).toBe(0);
    expect(resumePoint(program("(?:order|other)x"), "order", false)).toBe(0);
    expect(resumePoint(program("ord"), "order", false)).toBe(0);
  });

  it("resumed, answers as a run from the start does when the factor is there", () => {
    const { code, tables } = compiled("tk1-\\d{3,5}\\b")!;
    const resume = resumePoint(code, "tk1-", false);
    for (const text of ["tk1-123", "TK1-12", "tk1-123456", "x tk1-9999 y"]) {
      const start = text.toLowerCase().indexOf("tk1-");
      expect(verifyAt(tables, 0, text, start + 4, resume)).toBe(verifyAt(tables, 0, text, start));
    }
  });
});

describe("searchFrom (what RegExp.prototype.test answers)", () => {
  const search = (source: string) => {
    const c = compiled(source)!;
    return (text: string) => searchFrom(c.tables, 0, text, 0);
  };

  it("agrees with V8's test on random patterns and inputs", () => {
    const rand = prng(47);
    const atoms = ["a", "B", "s", "k", "\\d", "\\w", "\\s", ".", "[a-c]", "[^b]", "\\b", "^", "$", "é", "\\p{L}", "😀"];
    const quantifiers = ["", "", "?", "*", "+", "{2}", "{0,3}", "+?"];
    const pattern = (depth: number): string =>
      Array.from({ length: 1 + rand.int(4) }, () => {
        if (depth < 2 && rand.int(4) === 0)
          return `(${Array.from({ length: 1 + rand.int(3) }, () => pattern(depth + 1)).join("|")})${rand.pick(quantifiers)}`;
        const atom = rand.pick(atoms);
        return ["\\b", "^", "$"].includes(atom) ? atom : atom + rand.pick(quantifiers);
      }).join("");
    const chars = ["a", "A", "b", "s", "ſ", "k", "\u212A", "1", " ", "\n", "é", "É", "😀", "x"];
    let checked = 0;
    for (let n = 0; n < 600; n++) {
      const source = pattern(0);
      const regex = new RegExp(source, PATTERN_FLAGS);
      const run = search(source);
      for (let k = 0; k < 12; k++) {
        const text = Array.from({ length: rand.int(10) }, () => rand.pick(chars)).join("");
        if (run(text) !== regex.test(text))
          expect.fail(`${source} on ${JSON.stringify(text)}: V8 says ${regex.test(text)}`);
        checked++;
      }
    }
    expect(checked).toBe(7200);
  });

  it("starts from the given position", () => {
    const c = compiled("ab")!;
    expect(searchFrom(c.tables, 0, "xxab", 2)).toBe(true);
    expect(searchFrom(c.tables, 0, "abxx", 1)).toBe(false);
  });
});
