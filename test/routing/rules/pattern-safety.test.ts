import { describe, expect, it } from "vitest";
import { checkPattern, compilePattern, PATTERN_FLAGS } from "../../../src/routing/rules/pattern-safety";

describe("checkPattern", () => {
  it.each(["(a+)+", "(\\w*)*", "(x+|y)+", "(?:a|b+)*", "(a{1,})+", "((a+)?)+", "(\\d+\\s?)+$", "(?<n>a*)+"])(
    "refuses nested unbounded quantifiers: %s",
    (source) => {
      expect(checkPattern(source)).toMatch(/nests unbounded quantifiers/);
    },
  );

  it.each(["a+b+", "(ab)+", "\\d{3}-\\d{4}", "(a|b)+", "(a+){2}", "[(+)]+", "\\(a+\\)+", "order\\s*#?\\d{6}", "(refund|return)\\s+\\w+"])(
    "admits %s",
    (source) => {
      expect(checkPattern(source)).toBeNull();
    },
  );

  it.each(["(", "[a-", "a{2,1}", "\\", "(?<n>a)(?<n>b)", "\\-", "x**"])("refuses a pattern that does not compile: %s", (source) => {
    expect(checkPattern(source)).toMatch(/^does not compile/);
  });

  it("hands back a regex with the rule flags and no global state", () => {
    const compiled = compilePattern("order\\d");
    expect(compiled.ok).toBe(true);
    if (compiled.ok) {
      expect(compiled.regex.flags).toBe(PATTERN_FLAGS);
      expect(compiled.regex.global || compiled.regex.sticky).toBe(false);
    }
  });
});
