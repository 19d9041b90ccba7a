import { describe, expect, it } from "vitest";
import {
  extractFeatures,
  gramKey,
  lengthKey,
  pairKey,
  stem,
  stemHashes,
} from "../../../src/routing/classifier/features";

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

  it("gives character 3-grams to words of two letters or more, each once", () => {
    const f = extractFeatures("card card is a");
    const c = (ch: string) => ch.charCodeAt(0);
    expect(f.grams).toContain(gramKey(c("<"), c("c"), c("a")));
    expect(f.grams).toContain(gramKey(c("r"), c("d"), c(">")));
    expect(f.grams).toContain(gramKey(c("<"), c("i"), c("s")));
    expect(f.grams).not.toContain(gramKey(c("<"), c("a"), c(">")));
    expect(new Set(f.grams).size).toBe(f.grams.length);
    expect(f.gramOwner.map((i) => f.terms[i]?.term)).toEqual([...Array(4).fill("card"), "is", "is"]);
  });

  it("pairs each word with the words two to four before it, in order, as keys clear of the grams", () => {
    const pair = (a: string, b: string) => pairKey(stemHashes(stem(a)), stemHashes(stem(b)));
    const f = extractFeatures("please substitute cumin for the turmeric");
    expect(f.phrase).toEqual(
      expect.arrayContaining([pair("substitute", "for"), pair("please", "for"), pair("cumin", "turmeric")]),
    );
    // Adjacent words are bigrams already; five apart is past the window; order matters.
    expect(f.phrase).not.toContain(pair("cumin", "for"));
    expect(f.phrase).not.toContain(pair("please", "turmeric"));
    expect(f.phrase).not.toContain(pair("for", "substitute"));
    expect(pair("for", "substitute")).not.toBe(pair("substitute", "for"));
    const gramKeyMax = gramKey(0xffff, 0xffff, 0xffff);
    for (const key of f.phrase) expect(key).toBeGreaterThan(gramKeyMax);
    expect(f.phraseOwner[f.phrase.indexOf(pair("substitute", "for"))]).toBe(f.terms.findIndex((t) => t.term === "for"));
  });

  it("adds the length in words, capped, as one feature that belongs to no word", () => {
    const lengthOf = (text: string) => {
      const f = extractFeatures(text);
      const i = f.phraseOwner.indexOf(-1);
      return { key: f.phrase[i], count: f.phraseOwner.filter((o) => o === -1).length };
    };
    expect(lengthOf("yes")).toEqual({ key: lengthKey(1), count: 1 });
    expect(lengthOf("yes please")).toEqual({ key: lengthKey(2), count: 1 });
    expect(lengthOf("one two three four five six seven eight").key).toBe(lengthKey(6));
    expect(lengthOf("我要退款").key).toBe(lengthKey(4));
    expect(new Set([1, 2, 3, 4, 5, 6].map(lengthKey)).size).toBe(6);
    expect(lengthKey(1)).toBeGreaterThan(pairKey([0xffffffff, 0xffffffff], [0xffffffff, 0xffffffff]));
  });

  it("keeps gram keys distinct for code units beyond Latin-1", () => {
    const keys = new Set([gramKey(60, 0x4e00, 62), gramKey(60, 0x4e01, 62), gramKey(60, 1, 62), gramKey(1, 1, 1)]);
    expect(keys.size).toBe(4);
  });

  it("returns nothing for text without letters or digits", () => {
    expect(extractFeatures("!!! ...")).toEqual({ terms: [], grams: [], gramOwner: [], phrase: [], phraseOwner: [] });
  });
});
