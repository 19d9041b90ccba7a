import { describe, expect, it } from "vitest";
import type { RuleExplanation } from "../../src/routing/classifier/explain";
import { DECLINE_BELOW } from "../../src/routing/rule-decision";
import { compileRuleRouter } from "../../src/routing/rule-router";
import { AgentDefinition, type AgentDefinitionInput } from "../../src/schemas/agent";

const agent = (a: AgentDefinitionInput) => AgentDefinition.parse(a);

/** A small support team with English and Chinese examples and a few keywords. */
const team = [
  agent({
    name: "billing",
    description: "Invoices, refunds and payments",
    triggers: {
      keywords: ["refund", "invoice", "退款"],
      patterns: ["charged\\s+twice"],
      examples: [
        "I want a refund for my order",
        "why was I charged twice this month",
        "send me last month's invoice",
        "update the credit card on my account",
        "how do I change my payment method",
        "cancel my subscription and refund me",
        "我要退款",
        "发票在哪里下载",
        "我的付款失败了",
      ],
    },
  }),
  agent({
    name: "technical",
    description: "Bugs, errors and login problems",
    triggers: {
      keywords: ["error", "crash", "报错"],
      examples: [
        "the app crashes when I open it",
        "I get an error on the settings page",
        "reset my password please",
        "I cannot log in to my account",
        "the export button does nothing",
        "the page is very slow to load",
        "登录的时候报错",
        "应用一直崩溃",
        "密码重置邮件收不到",
      ],
    },
  }),
  agent({
    name: "sales",
    description: "Pricing, plans and demos",
    triggers: {
      keywords: ["pricing", "demo"],
      examples: [
        "how much does the pro plan cost",
        "can I get a demo for my team",
        "do you offer discounts for nonprofits",
        "I want to upgrade to the enterprise plan",
        "what is included in the business tier",
        "talk to someone about pricing",
        "专业版多少钱",
        "可以预约产品演示吗",
        "企业版有折扣吗",
      ],
    },
  }),
];

const explanation = (d: { explanation?: unknown }) => d.explanation as RuleExplanation;

describe("rule router", () => {
  const router = compileRuleRouter(team);

  it("routes a clear request to its agent with high confidence", () => {
    const d = router.decide("I want a refund for my order");
    expect(d.agent).toBe("billing");
    expect(d.confidence).toBeGreaterThanOrEqual(80);
    expect(d.matched_keywords).toEqual(["refund"]);
    expect(d.score).toBeGreaterThan(0);
  });

  it("routes Chinese requests through the classifier and CJK keywords", () => {
    expect(router.decide("我想要退款").agent).toBe("billing");
    expect(router.decide("应用崩溃了怎么办").agent).toBe("technical");
    expect(router.decide("专业版的价格是多少").agent).toBe("sales");
  });

  it("is less confident about an input that mixes two agents than about a clear one", () => {
    const clear = router.decide("why was I charged twice this month");
    const mixed = router.decide("the refund page shows an error");
    expect(clear.confidence).toBeGreaterThan(mixed.confidence);
    // Well below the clear one (with the calibration fitted beside the demo agents it lands near 82).
    expect(mixed.confidence).toBeLessThan(clear.confidence - 10);
  });

  it("keeps input that fits no agent under the default threshold, so it never decides alone", () => {
    for (const input of [
      "what is the capital of mongolia",
      "tell me a story about dragons",
      "can you recommend a good book",
    ]) {
      expect(router.decide(input).confidence).toBeLessThan(80);
    }
  });

  it("answers 'not mine' (agent null, confidence 0, no candidates) when no word is known", () => {
    expect(router.decide("zzz qqq")).toMatchObject({ agent: null, confidence: 0, candidates: [] });
  });

  it("is surer when a keyword of the chosen agent matches too", () => {
    const withKeyword = compileRuleRouter(
      team.map((a) =>
        a.name === "billing" ? { ...a, triggers: { ...a.triggers, keywords: [...a.triggers.keywords, "money"] } } : a,
      ),
    );
    const input = "can I get my money back";
    const plain = router.decide(input);
    const boosted = withKeyword.decide(input);
    expect(boosted.agent).toBe("billing");
    expect(boosted.matched_keywords).toEqual(["money"]);
    const before = plain.candidates.find((c) => c.agent === "billing");
    expect(before).toMatchObject({ agent: "billing", matched_keywords: [] });
    expect(boosted.confidence).toBeGreaterThan(before!.confidence);
  });

  it("lists at most three candidates, best first, each with its own confidence", () => {
    const d = router.decide("how do I change my payment method");
    expect(d.candidates.map((c) => c.agent)).toEqual(["billing", "sales", "technical"]);
    expect(
      compileRuleRouter([
        ...team,
        agent({ name: "extra", triggers: { examples: ["change my payment details"] } }),
      ]).decide("how do I change my payment method").candidates,
    ).toHaveLength(3);
    expect(d.candidates[0]?.agent).toBe(d.agent);
    expect(d.candidates[0]?.confidence).toBe(d.confidence);
    for (const c of d.candidates.slice(1)) expect(c.confidence).toBeLessThan(d.confidence);
  });

  it("explains a decision with its nearest examples, its top terms and its rule matches", () => {
    const d = router.decide("I was charged twice, please refund me");
    const e = explanation(d);
    expect(e.agent).toBe("billing");
    expect(e.examples.length).toBeGreaterThan(0);
    expect(e.examples.map((x) => x.text)).toContain("why was I charged twice this month");
    expect(e.examples[0]?.similarity).toBeGreaterThan(0);
    expect(e.terms.length).toBeGreaterThan(0);
    expect(e.terms.map((t) => t.term)).toEqual(expect.arrayContaining(["charged"]));
    expect(e.matched_keywords).toEqual(["refund"]);
    expect(e.matched_patterns).toEqual(["charged\\s+twice"]);
    expect(JSON.parse(JSON.stringify(d)).explanation.agent).toBe("billing");
  });

  it("survives structured clone (Workers RPC) and spreads with its explanation as plain data", () => {
    const d = router.decide("I was charged twice, please refund me");
    const cloned = structuredClone(d) as typeof d;
    expect(explanation(cloned).agent).toBe("billing");
    expect(explanation({ ...d }).examples.length).toBeGreaterThan(0);
    expect(explanation(cloned)).toEqual(explanation(d));
  });

  it("leaves disabled agents out", () => {
    const r = compileRuleRouter(team.map((a) => (a.name === "billing" ? { ...a, enabled: false } : a)));
    expect(r.agents).toEqual(["technical", "sales"]);
    const d = r.decide("I want a refund for my order");
    expect(d.agent).not.toBe("billing");
    expect(d.candidates.map((c) => c.agent)).not.toContain("billing");
  });

  it("answers an empty registry with agent null and confidence 0", () => {
    const d = compileRuleRouter([]).decide("refund please");
    expect(d).toMatchObject({ agent: null, confidence: 0, score: 0, candidates: [], matched_keywords: [] });
  });

  it("is deterministic: two compiles of one registry decide alike", () => {
    const other = compileRuleRouter(team);
    for (const input of ["refund for my pro plan", "the app shows an error", "我要退款", "hello"]) {
      const a = router.decide(input);
      const b = other.decide(input);
      expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    }
  });

  it("reports the memory of its compiled structures, growing with the examples", () => {
    const small = compileRuleRouter(
      team.map((a) => ({ ...a, triggers: { ...a.triggers, examples: a.triggers.examples.slice(0, 2) } })),
    );
    expect(router.memoryBytes).toBeGreaterThan(small.memoryBytes);
  });
});

describe("rule router with a single agent", () => {
  const router = compileRuleRouter([team[0] as AgentDefinition]);

  it("claims what resembles its examples and stays under 80 for what does not", () => {
    const d = router.decide("how do I change my payment method");
    expect(d.agent).toBe("billing");
    expect(d.confidence).toBeGreaterThanOrEqual(80);
    expect(d.candidates).toHaveLength(1);
    expect(router.decide("tell me a joke").confidence).toBeLessThan(80);
  });
});

describe("rule router with keywords only", () => {
  const kw = [
    agent({
      name: "billing",
      description: "Invoices, refunds and payments",
      triggers: { keywords: ["refund", "invoice", "billing"], patterns: ["charged\\s+twice"] },
    }),
    agent({
      name: "technical",
      description: "Bugs, errors and crashes",
      triggers: { keywords: ["error", "crash", "bug"] },
    }),
    agent({ name: "sales", description: "Pricing and demos", triggers: { keywords: ["pricing", "demo"] } }),
  ];
  const router = compileRuleRouter(kw);

  it("clears 80 on a strong, unambiguous keyword or pattern match", () => {
    const d = router.decide("I need a refund for this invoice");
    expect(d.agent).toBe("billing");
    expect(d.confidence).toBeGreaterThanOrEqual(80);
    const p = router.decide("I was charged twice");
    expect(p.agent).toBe("billing");
    expect(p.matched_patterns).toEqual(["charged\\s+twice"]);
    expect(p.confidence).toBeGreaterThanOrEqual(80);
  });

  it("stays under 80 when keywords of two agents match", () => {
    const d = router.decide("the refund page shows an error");
    expect(d.confidence).toBeLessThan(80);
  });

  it("is less sure of a pattern at low priority than at the default one", () => {
    const low = compileRuleRouter(kw.map((a) => ({ ...a, triggers: { ...a.triggers, priority: 10 } })));
    expect(low.decide("I was charged twice").confidence).toBeLessThan(router.decide("I was charged twice").confidence);
  });

  it("declines text with no keyword and no known word", () => {
    const d = router.decide("what's the weather in paris");
    expect(d.agent).toBeNull();
    expect(d.confidence).toBeLessThan(DECLINE_BELOW);
  });
});
