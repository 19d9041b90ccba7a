import { describe, expect, it } from "vitest";
import { buildChunkMatcher, countGroups } from "../../../src/routing/rules/pattern-gates";
import { PATTERN_FLAGS } from "../../../src/routing/rules/pattern-safety";
import { prng } from "./reference-matcher";

describe("countGroups", () => {
  it.each([
    ["abc", 0],
    ["(a)(b)", 2],
    ["(?:a)(?=b)(?!c)(?<=d)(?<!e)", 0],
    ["\\(a\\)", 0],
    ["[(]a[)(]", 0],
    ["[\\]](x)", 1],
    ["((a)|(b))", 3],
  ])("%s has %i capturing groups", (source, count) => {
    expect(countGroups(source)).toBe(count);
    expect(new RegExp(`${source}|`, PATTERN_FLAGS).exec("")!.length - 1).toBe(count);
  });
});

describe("buildChunkMatcher", () => {
  it("refuses chunks it cannot join safely", () => {
    expect(buildChunkMatcher(["abc"])).toBeNull();
    expect(buildChunkMatcher(["(a)\\1", "abc"])).toBeNull();
    expect(buildChunkMatcher(["(?<n>a)", "abc"])).toBeNull();
    expect(buildChunkMatcher(["a\\k<n>(?<n>b)", "abc"])).toBeNull();
  });

  it("tells in one call exactly which patterns match sticky at a position", () => {
    const sources = ["order(\\d+)", "order\\s*#?\\d{2}", "ord(e)(r)s?", "(or|de)+r", "order$", "order(?=x)", "(?<=\\s)order", "o", "order(s|z)?\\b", "[(]?order"];
    const matcher = buildChunkMatcher(sources)!;
    const singles = sources.map((s) => new RegExp(s, `${PATTERN_FLAGS}y`));
    const rand = prng(9);
    const pieces = ["order", "ORDER", "orders", "ordez", " ", "#", "12", "x", "(", "de", "or"];
    for (let n = 0; n < 300; n++) {
      const text = Array.from({ length: 1 + rand.int(5) }, () => rand.pick(pieces)).join("");
      for (let at = 0; at < text.length; at++) {
        matcher.regex.lastIndex = at;
        const found = matcher.regex.exec(text)!;
        singles.forEach((single, k) => {
          single.lastIndex = at;
          expect(found[matcher.captures[k]!] !== undefined, `${sources[k]} at ${at} of ${JSON.stringify(text)}`).toBe(single.test(text));
        });
      }
    }
  });
});
