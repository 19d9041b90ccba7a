import { describe, expect, it } from "vitest";
import { compileClassifierPart, linkClassifierImage } from "../../../src/routing/classifier/classifier-link";
import {
  COUNT_WEIGHT,
  classifierFromImage,
  compileClassifier,
  type LexicalClassifier,
} from "../../../src/routing/classifier/lexical-classifier";

const sets = [
  {
    agent: "billing",
    examples: [
      "I want a refund for my order",
      "why was I charged twice",
      "send me last month's invoice",
      "我要退款",
      "发票在哪里下载",
    ],
  },
  {
    agent: "technical",
    examples: [
      "the app crashes when I log in",
      "I get an error on the settings page",
      "reset my password please",
      "登录的时候报错",
      "应用一直崩溃",
    ],
  },
  {
    agent: "travel",
    examples: [
      "book a flight to paris",
      "find me a hotel in rome",
      "is my flight delayed",
      "帮我订一张去上海的机票",
      "预订酒店",
    ],
  },
];

const best = (cl: LexicalClassifier, input: string) => {
  const c = cl.classify(input);
  let b = 0;
  c.probs.forEach((p, i) => {
    if (p > (c.probs[b] as number)) b = i;
  });
  return cl.agents[b];
};

describe("lexical classifier", () => {
  const cl = compileClassifier(sets);

  it("routes English paraphrases to the agent whose examples they resemble", () => {
    expect(best(cl, "I would like a refund please")).toBe("billing");
    expect(best(cl, "the application crashed again with an error")).toBe("technical");
    expect(best(cl, "can you book me a hotel")).toBe("travel");
  });

  it("routes Chinese text, which has no spaces, through character n-grams", () => {
    expect(best(cl, "我想退款")).toBe("billing");
    expect(best(cl, "应用崩溃了")).toBe("technical");
    expect(best(cl, "订机票去北京")).toBe("travel");
  });

  it("gives a probability distribution over the agents", () => {
    const c = cl.classify("refund my order");
    expect(c.probs).toHaveLength(3);
    expect([...c.probs].reduce((s, p) => s + p, 0)).toBeCloseTo(1, 9);
  });

  it("measures how much of the input the examples know", () => {
    expect(cl.classify("I want a refund for my order").knownMass).toBe(1);
    expect(cl.classify("zebra xylophone quantum").knownMass).toBe(0);
  });

  it("finds an agent's nearest examples, best first, with exact similarity 1 for a training text", () => {
    const c = cl.classify("book a flight to paris");
    const near = cl.nearest(c, 2, 2);
    expect(cl.exampleText(near[0]?.example ?? -1)).toBe("book a flight to paris");
    expect(near[0]?.similarity).toBeGreaterThanOrEqual(near[1]?.similarity ?? 0);
    expect(cl.similarity(c, near[0]?.example ?? -1)).toBeCloseTo(1, 5);
    expect(cl.exampleAgent(near[0]?.example ?? -1)).toBe(2);
  });

  it("names the terms that separate the winner from the runner-up", () => {
    const c = cl.classify("refund for my invoice");
    const terms = cl.termContributions(c, 0, 1).sort((a, b) => b.weight - a.weight);
    expect(terms[0]?.weight).toBeGreaterThan(0);
    expect(["refund", "invoice"]).toContain(terms[0]?.term);
  });

  it("adds the counted model's logits, at COUNT_WEIGHT, to a trained model's", () => {
    const image = linkClassifierImage(sets.map(compileClassifierPart));
    expect(image.trained).toBe(true);
    expect(image.counted).toBeTruthy();
    const alone = classifierFromImage({ ...image, counted: null }).classify("I was charged twice for my flight");
    const both = classifierFromImage(image).classify("I was charged twice for my flight");
    expect(alone.countLogits).toBe(alone.logits);
    both.logits.forEach((l, a) => {
      expect(l).toBeCloseTo((alone.logits[a] as number) + COUNT_WEIGHT * (both.countLogits[a] as number), 9);
    });
    // The two opinions differ; the sum is what the router ranks by.
    expect(both.logits).not.toEqual(alone.logits);
  });

  it("gives every agent's nearest-example similarity in one walk, as nearest() does one by one", () => {
    for (const input of ["I was charged twice for my flight", "book a hotel", "zebra"]) {
      const c = cl.classify(input);
      const all = cl.nearestByAgent(c);
      expect(all).toHaveLength(3);
      for (let a = 0; a < 3; a++) expect(all[a]).toBeCloseTo(cl.nearest(c, a, 1)[0]?.similarity ?? 0, 6);
    }
  });

  it("weighs a keyword by the share of its examples that are the agent's", () => {
    // Only billing's examples say "refund": whole for billing, a pseudo-example's half for the others.
    expect(cl.keywordShare("refund", 0)).toBe(1);
    expect(cl.keywordShare("refund", 1)).toBeCloseTo(0.5, 9);
    // "flight" is in two of travel's examples and nobody else's.
    expect(cl.keywordShare("flight", 2)).toBe(1);
    expect(cl.keywordShare("flight", 0)).toBeCloseTo(1 / 3, 9);
    // A word no example holds tells nothing against the keyword: it counts whole.
    expect(cl.keywordShare("zebra", 1)).toBe(1);
  });

  it("compiles deterministically", () => {
    const other = compileClassifier(sets);
    const a = cl.classify("my flight was charged twice");
    const b = other.classify("my flight was charged twice");
    expect([...b.logits]).toEqual([...a.logits]);
    expect(other.memoryBytes).toBe(cl.memoryBytes);
  });

  it("handles agents without examples and an empty input", () => {
    const sparse = compileClassifier([
      { agent: "a", examples: ["hello there"] },
      { agent: "b", examples: [] },
    ]);
    expect(sparse.classify("").knownMass).toBe(0);
    expect(sparse.nearest(sparse.classify("hello"), 1)).toEqual([]);
  });
});
