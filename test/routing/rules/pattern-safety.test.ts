import { describe, expect, it } from "vitest";
import { checkPattern } from "../../../src/routing/rules/pattern-safety";

describe("checkPattern", () => {
  it.each([
    [
      "(a)\\1",
      /^uses a backreference \(\\1, \\k<name>\), which needs backtracking; Relay matches patterns in linear time/,
    ],
    ["(?<n>a)\\k<n>", /^uses a backreference/],
    ["a(?=b)", /^uses lookaround/],
    ["a(?!b)", /^uses lookaround/],
    ["(?<=a)b", /^uses lookaround/],
    ["(?<!a)b", /^uses lookaround/],
    ["x(?:y|(z)\\1)", /^uses a backreference/],
    ["(?i:a)", /^uses an inline modifier group/],
  ])("refuses %s, naming the construct", (source, reason) => {
    expect(checkPattern(source)).toMatch(reason);
  });

  it.each([
    "(a+)+",
    "(\\w*)*",
    "(x+|y)+",
    "(?:a|b+)*",
    "(a|a?)+b",
    "(a|aa)+$",
    "(.*a){20}",
    "(\\d+\\s?)+$",
    "a+b+",
    "\\d{3}-\\d{4}",
    "order\\s*#?\\d{6}",
    "重复扣款",
    "\\p{Lu}+",
    "[α-ω]",
  ])("admits %s: the matcher runs it in linear time", (source) => {
    expect(checkPattern(source)).toBeNull();
  });

  it("refuses a pattern whose repetitions expand past the matcher's program size", () => {
    expect(checkPattern("(?:abcdef){300}")).toMatch(/^is too large: its repetitions expand past 1000 instructions/);
    expect(checkPattern("(.*){1,32000}[bc]")).toMatch(/^is too large/);
    expect(checkPattern("(?:abcdef){30}")).toBeNull();
  });

  it.each(["(", "[a-", "a{2,1}", "\\", "(?<n>a)(?<n>b)", "\\-", "x**"])(
    "refuses a pattern that does not compile: %s",
    (source) => {
      expect(checkPattern(source)).toMatch(/^does not compile/);
    },
  );
});
