import { describe, expect, it } from "vitest";
import { extractFeatures, gramKey, stem } from "../../../src/routing/classifier/features";

const terms = (text: string) => extractFeatures(text).terms.map((t) => t.term);

describe("features", () => {
  it("merges English inflections with a light stem and keeps short words intact", () => {
    expect(stem("cards")).toBe(stem("card"));
    expect(stem("booked")).toBe(stem("booking"));
    expect(stem("policies")).toBe(stem("policy"));
    expect(stem("is")).toBe("is");
    expect(stem("class")).toBe("class");
  });

  it("lower-cases, applies NFKC and drops apostrophes", () => {
    expect(terms("ＡＰＲ")).toEqual(terms("apr"));
    expect(terms("What's")).toEqual(terms("whats"));
  });

  it("adds bigrams of adjacent words", () => {
    expect(terms("credit card limit")).toEqual(expect.arrayContaining(["credit card", "card limit"]));
  });

  it("splits CJK runs into characters and character bigrams, also inside mixed text", () => {
    const t = terms("我的信用卡visa被冻结");
    expect(t).toEqual(expect.arrayContaining(["信", "用", "卡", "信用", "用卡", "冻结", "visa"]));
    expect(t).not.toContain("我的信用卡");
  });

  it("counts repeated terms", () => {
    expect(extractFeatures("refund refund now").terms.find((t) => t.term === "refund")?.count).toBe(2);
  });

  it("gives character 3-grams to words of three letters or more, each once", () => {
    const f = extractFeatures("card card is");
    const c = (ch: string) => ch.charCodeAt(0);
    expect(f.grams).toContain(gramKey(c("<"), c("c"), c("a")));
    expect(f.grams).toContain(gramKey(c("r"), c("d"), c(">")));
    expect(new Set(f.grams).size).toBe(f.grams.length);
    expect(f.grams).not.toContain(gramKey(c("<"), c("i"), c("s")));
    expect(f.gramOwner.every((i) => f.terms[i]?.term === "card")).toBe(true);
  });

  it("keeps gram keys distinct for code units beyond Latin-1", () => {
    const keys = new Set([gramKey(60, 0x4e00, 62), gramKey(60, 0x4e01, 62), gramKey(60, 1, 62), gramKey(1, 1, 1)]);
    expect(keys.size).toBe(4);
  });

  it("returns nothing for text without letters or digits", () => {
    expect(extractFeatures("!!! ...")).toEqual({ terms: [], grams: [], gramOwner: [] });
  });
});
