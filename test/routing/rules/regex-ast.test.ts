import { describe, expect, it } from "vitest";
import { parseRegex, type RegexNode } from "../../../src/routing/rules/regex-ast";

const once = { min: 1, max: 1 };
/** The single node of a one-alternative, one-node pattern. */
const only = (source: string): RegexNode => {
  const ast = parseRegex(source);
  expect(ast, source).not.toBeNull();
  expect(ast!.length).toBe(1);
  expect(ast![0]!.length).toBe(1);
  return ast![0]![0]!;
};

describe("parseRegex", () => {
  it("keeps literal characters and simple escapes as code points, case kept", () => {
    expect(parseRegex("aB")).toEqual([
      [
        { type: "char", code: 0x61, ...once },
        { type: "char", code: 0x42, ...once },
      ],
    ]);
    expect(only("\\.")).toEqual({ type: "char", code: 0x2e, ...once });
    expect(only("\\n")).toEqual({ type: "char", code: 10, ...once });
    expect(only("\\0")).toEqual({ type: "char", code: 0, ...once });
    expect(parseRegex("é😀")![0]!.map((n) => (n.type === "char" ? n.code : -1))).toEqual([0xe9, 0x1f600]);
  });

  it("splits alternatives and keeps empty ones", () => {
    expect(parseRegex("a|")).toEqual([[{ type: "char", code: 0x61, ...once }], []]);
    expect(parseRegex("")).toEqual([[]]);
  });

  it.each([
    ["a*", 0, Infinity],
    ["a+", 1, Infinity],
    ["a?", 0, 1],
    ["a{3}", 3, 3],
    ["a{2,}", 2, Infinity],
    ["a{2,5}", 2, 5],
    ["a+?", 1, Infinity],
    ["a{0,1}?", 0, 1],
  ])("reads the quantifier of %s as {%d,%d}", (source, min, max) => {
    expect(only(source)).toMatchObject({ min, max });
  });

  it("describes \\d-like escapes and ASCII bracket classes as sets", () => {
    expect(only("\\D")).toEqual({
      type: "class",
      bracket: false,
      set: { members: "0123456789", spaces: false, negated: true },
      source: "\\D",
      ...once,
    });
    expect(only("[^a-c\\s-]")).toMatchObject({
      type: "class",
      bracket: true,
      set: { members: "abc\t\n\v\f\r -", spaces: true, negated: true },
    });
    expect(only("[a-]")).toMatchObject({ set: { members: "a-" } });
    expect(only("[\\]\\-]")).toMatchObject({ set: { members: "]-" } });
    expect(only("[]")).toMatchObject({ set: { members: "", negated: false } });
  });

  it.each(["[é]", "[\\D]", "[\\b]", "[z-a]", "[a-\\d]", "[\\x41]", "[\\p{L}]"])(
    "keeps %s as a bracket it does not describe",
    (source) => {
      expect(only(source)).toEqual({ type: "class", bracket: true, set: null, source, ...once });
    },
  );

  it.each(["\\x41", "\\u0041", "\\u{1F600}", "\\cA", "\\p{L}", "\\P{Lu}"])(
    "keeps the escape %s as one undescribed unit",
    (source) => {
      expect(only(source)).toEqual({ type: "class", bracket: false, set: null, source, ...once });
    },
  );

  it("tells groups, named groups, modifier groups, lookaround and backreferences apart", () => {
    const inner = [[{ type: "char", code: 0x61, ...once }]];
    expect(only("(a)")).toEqual({ type: "group", alts: inner, name: undefined, modifiers: undefined, ...once });
    expect(only("(?:a)")).toEqual({ type: "group", alts: inner, name: undefined, modifiers: undefined, ...once });
    expect(only("(?<id>a)")).toMatchObject({ type: "group", name: "id" });
    expect(only("(?i:a)")).toMatchObject({ type: "group", modifiers: "i" });
    expect(only("(?-i:a)")).toMatchObject({ type: "group", modifiers: "-i" });
    for (const look of ["(?=a)", "(?!a)", "(?<=a)", "(?<!a)"])
      expect(only(look)).toEqual({ type: "lookaround", alts: inner, ...once });
    expect(parseRegex("(a)\\1")![0]![1]).toEqual({ type: "backref", ...once });
    expect(parseRegex("(?<n>a)\\k<n>")![0]![1]).toEqual({ type: "backref", ...once });
  });

  it("reads the four assertions", () => {
    expect(parseRegex("^\\b\\B$")![0]!.map((n) => (n.type === "assert" ? n.kind : null))).toEqual([
      "^",
      "\\b",
      "\\B",
      "$",
    ]);
  });

  it.each([
    "a)",
    "(a",
    "[a",
    "*a",
    "a**",
    "]",
    "}",
    "a{,2}",
    "\\",
    "\\q",
    "\\k",
    "\\01",
    "^*",
    "\\b+",
    "(?=a)?",
    "(?x",
    "\\u12",
  ])("refuses %s", (source) => {
    expect(parseRegex(source)).toBeNull();
  });
});
