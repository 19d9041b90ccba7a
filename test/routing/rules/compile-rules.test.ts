import { describe, expect, it } from "vitest";
import { compileRules } from "../../../src/routing/rules";
import { isRegexWordUnit } from "../../../src/routing/rules/text";
import { AgentDefinition, type AgentDefinitionInput } from "../../../src/schemas/agent";

type Triggers = { keywords?: string[]; patterns?: string[]; priority?: number };

const agent = (name: string, triggers: Triggers, extra: Partial<AgentDefinitionInput> = {}): AgentDefinition =>
  AgentDefinition.parse({ name, triggers, ...extra });

const one = (triggers: Triggers, input: string) => compileRules([agent("a", triggers)]).match(input);
const keywordHits = (keywords: string[], input: string): string[] =>
  one({ keywords, priority: 100 }, input)[0]?.matched_keywords ?? [];

describe("compileRules — rule scoring", () => {
  it("scores (10 per keyword + 20 per pattern) × priority/100: priority 80, 2 keywords + 1 pattern → 32", () => {
    const rules = compileRules([
      agent("billing", {
        keywords: ["invoice", "Refund", "payment"],
        patterns: ["order\\s*#?\\d{6}", "never-matches-zz"],
        priority: 80,
      }),
    ]);
    expect(rules.match("Refund my order #123456, the invoice is wrong")).toEqual([
      { agent: "billing", score: 32, matched_keywords: ["invoice", "Refund"], matched_patterns: ["order\\s*#?\\d{6}"] },
    ]);
  });

  it("rounds with the documented expression Math.round(total × (priority/100))", () => {
    expect(one({ keywords: ["refund"], priority: 55 }, "refund")[0]?.score).toBe(6); // 5.5 → 6
    // 50 × (29/100) is 14.499… in floating point, so the expression gives 14, not 15.
    expect(one({ keywords: ["a1", "b1", "c1", "d1", "e1"], priority: 29 }, "a1 b1 c1 d1 e1")[0]?.score).toBe(14);
  });

  it("leaves out agents whose score rounds to 0 (priority 0, or 10 × 4/100)", () => {
    expect(one({ keywords: ["refund"], priority: 0 }, "refund")).toEqual([]);
    expect(one({ keywords: ["refund"], priority: 4 }, "refund")).toEqual([]);
    expect(one({ keywords: ["refund"], priority: 5 }, "refund")[0]?.score).toBe(1);
  });

  it("counts a keyword once however often it occurs, and reports each once in definition order", () => {
    const [match] = one({ keywords: ["zeta", "alpha", "beta"], priority: 100 }, "beta alpha beta zeta alpha");
    expect(match).toMatchObject({ score: 30, matched_keywords: ["zeta", "alpha", "beta"] });
  });

  it("treats keywords equal after normalisation as one, reported with the first spelling", () => {
    const [match] = one({ keywords: ["Refund", "refund", " REFUND ", "ｒｅｆｕｎｄ"], priority: 100 }, "refund please");
    expect(match).toMatchObject({ score: 10, matched_keywords: ["Refund"] });
  });

  it("counts a pattern listed twice once", () => {
    expect(one({ patterns: ["ticket-\\d+", "ticket-\\d+"], priority: 100 }, "ticket-42")[0]).toMatchObject({
      score: 20,
      matched_patterns: ["ticket-\\d+"],
    });
  });

  it("orders by score, ties in registry order, and skips disabled agents", () => {
    const rules = compileRules([
      agent("low", { keywords: ["refund"], priority: 10 }),
      agent("tie-b", { keywords: ["refund"], priority: 50 }),
      agent("off", { keywords: ["refund", "order"], priority: 100 }, { enabled: false }),
      agent("tie-a", { keywords: ["refund"], priority: 50 }),
      agent("top", { keywords: ["refund", "order"], priority: 100 }),
      agent("none", { keywords: ["shipping"], priority: 100 }),
    ]);
    expect(rules.match("refund my order").map((m) => [m.agent, m.score])).toEqual([
      ["top", 20],
      ["tie-b", 5],
      ["tie-a", 5],
      ["low", 1],
    ]);
    expect(rules.stats.agents).toBe(5);
  });

  it("gives a keyword shared by several agents to each of them", () => {
    const rules = compileRules([
      agent("a", { keywords: ["refund"], priority: 100 }),
      agent("b", { keywords: ["invoice", "refund"], priority: 100 }),
    ]);
    expect(rules.match("a refund").map((m) => [m.agent, m.matched_keywords])).toEqual([
      ["a", ["refund"]],
      ["b", ["refund"]],
    ]);
    expect(rules.stats.entries).toBe(2);
  });

  it("returns nothing for empty or unrelated input, and for an empty registry", () => {
    const rules = compileRules([agent("a", { keywords: ["refund"], patterns: ["x\\d+"] })]);
    expect(rules.match("")).toEqual([]);
    expect(rules.match("hello there")).toEqual([]);
    expect(compileRules([]).match("refund")).toEqual([]);
  });

  it("gives the same answer on repeated and interleaved calls (scratch reuse) and hands out fresh arrays", () => {
    const rules = compileRules([
      agent("a", { keywords: ["refund", "退款"], patterns: ["order\\s*\\d+"], priority: 100 }),
    ]);
    const first = rules.match("refund order 12");
    expect(rules.match("nothing here")).toEqual([]);
    expect(rules.match("我想退款 order 7")[0]?.matched_keywords).toEqual(["退款"]);
    first[0]!.matched_keywords.push("mutated");
    expect(rules.match("refund order 12")).toEqual([
      { agent: "a", score: 30, matched_keywords: ["refund"], matched_patterns: ["order\\s*\\d+"] },
    ]);
  });
});

describe("compileRules — keyword matching", () => {
  it("is case-insensitive and reports the keyword as registered", () => {
    expect(keywordHits(["ReFuNd"], "REFUND NOW")).toEqual(["ReFuNd"]);
    expect(keywordHits(["привет"], "ПРИВЕТ мир")).toEqual(["привет"]);
  });

  it("matches NFKC-equivalent forms (full-width letters, ligatures, compatibility digits)", () => {
    expect(keywordHits(["refund"], "ＲＥＦＵＮＤ please")).toEqual(["refund"]);
    expect(keywordHits(["ｏｒｄｅｒ"], "my order")).toEqual(["ｏｒｄｅｒ"]);
    expect(keywordHits(["file"], "the ﬁle is gone")).toEqual(["file"]);
    expect(keywordHits(["café"], "un cafe\u0301 noir")).toEqual(["café"]);
  });

  it("folds Greek final sigma", () => {
    expect(keywordHits(["ΟΔΟΣ"], "η οδοσ")).toEqual(["ΟΔΟΣ"]);
    expect(keywordHits(["οδοσ"], "Η ΟΔΟΣ ΕΙΝΑΙ")).toEqual(["οδοσ"]);
  });

  it("matches whole words only in space-separated scripts", () => {
    for (const miss of [
      "refunds",
      "prerefund",
      "refunded",
      "refund2",
      "2refund",
      "refundé",
      "ärefund",
      "refund\u0301",
    ]) {
      expect(keywordHits(["refund"], `a ${miss} b`), miss).toEqual([]);
    }
    for (const hit of [
      "refund",
      "refund,",
      "(refund)",
      "refund's",
      "refund_id",
      "re:refund",
      "refund!",
      "«refund»",
      "-refund-",
    ]) {
      expect(keywordHits(["refund"], `a ${hit} b`), hit).toEqual(["refund"]);
    }
    expect(keywordHits(["refund"], "refund")).toEqual(["refund"]);
    expect(keywordHits(["деньги"], "нужны деньгиx")).toEqual([]);
    expect(keywordHits(["деньги"], "нужны деньги.")).toEqual(["деньги"]);
  });

  it("checks a boundary only at an end whose character is a word character", () => {
    expect(keywordHits(["c++"], "I write c++11 code")).toEqual(["c++"]);
    expect(keywordHits(["c++"], "abc++ code")).toEqual([]);
    expect(keywordHits(["#help"], "x#help")).toEqual(["#help"]);
  });

  it("matches multi-word keywords as phrases with any whitespace run between the words", () => {
    for (const hit of [
      "credit card",
      "Credit   Card",
      "credit\ncard",
      "credit\t \n card",
      "credit\u00a0card",
      "credit\u3000card",
    ]) {
      expect(keywordHits(["credit card"], `my ${hit} bill`), JSON.stringify(hit)).toEqual(["credit card"]);
    }
    for (const miss of ["creditcard", "credit cards", "credit-card", "credit, card"]) {
      expect(keywordHits(["credit card"], `my ${miss} bill`), miss).toEqual([]);
    }
    // The schema trims keywords; the inner whitespace run is kept as registered and matches any run.
    expect(keywordHits(["  credit \n card "], "credit card")).toEqual(["credit \n card"]);
  });

  it("matches CJK and Thai keywords as substrings", () => {
    expect(keywordHits(["退款"], "我想申请退款。")).toEqual(["退款"]);
    expect(keywordHits(["返金"], "返金してください")).toEqual(["返金"]);
    expect(keywordHits(["キャンセル"], "注文をキャンセルしたい")).toEqual(["キャンセル"]);
    expect(keywordHits(["ｷｬﾝｾﾙ"], "注文をキャンセルしたい")).toEqual(["ｷｬﾝｾﾙ"]);
    expect(keywordHits(["환불"], "환불을 원합니다")).toEqual(["환불"]);
    expect(keywordHits(["คืนเงิน"], "ฉันต้องการคืนเงินค่ะ")).toEqual(["คืนเงิน"]);
  });

  it("handles mixed English and Chinese inputs and keywords", () => {
    expect(keywordHits(["refund", "退款"], "我要refund谢谢")).toEqual(["refund"]);
    expect(keywordHits(["refund", "退款"], "refund退款")).toEqual(["refund", "退款"]);
    expect(keywordHits(["refund"], "我要refunds")).toEqual([]);
    expect(keywordHits(["VIP会员"], "成为vip会员吗")).toEqual(["VIP会员"]);
    expect(keywordHits(["VIP会员"], "成为avip会员吗")).toEqual([]);
    expect(keywordHits(["会员"], "VIP会员")).toEqual(["会员"]);
    expect(keywordHits(["订单 order"], "我的订单  ORDER 号")).toEqual(["订单 order"]);
  });

  it("copes with astral characters next to keywords and in them", () => {
    expect(keywordHits(["refund"], "😀refund😀")).toEqual(["refund"]);
    expect(keywordHits(["refund"], "𝐀refund")).toEqual([]); // mathematical bold A is NFKC "a"
    expect(keywordHits(["𠀀字"], "是𠀀字吗")).toEqual(["𠀀字"]);
    expect(keywordHits(["refund"], "refund\u{10428}")).toEqual([]); // Deseret letter
  });

  it("scans inputs longer than its scratch buffers", () => {
    const long = `${"lorem ipsum ".repeat(5000)}refund ${"dolor ".repeat(1000)}退款`;
    expect(keywordHits(["refund", "退款", "dolor sit"], long)).toEqual(["refund", "退款"]);
  });

  it("gives the same answers with the sparse automaton as with the dense one", () => {
    const agents = [
      agent("a", {
        keywords: ["refund", "credit card", "退款", "VIP会员", "οδος"],
        patterns: ["order\\s*\\d+"],
        priority: 100,
      }),
      agent("b", { keywords: ["card", "退", "ΟΔΟΣ"], priority: 70 }),
    ];
    const dense = compileRules(agents);
    const sparse = compileRules(agents, { denseCellLimit: 0 });
    expect(dense.stats.dense).toBe(true);
    expect(sparse.stats.dense).toBe(false);
    for (const input of [
      "Refund my credit  card",
      "我想申请退款",
      "成为VIP会员",
      "η οδος",
      "order 77 card",
      "nothing",
    ]) {
      expect(sparse.match(input), input).toEqual(dense.match(input));
    }
  });
});

describe("compileRules — patterns", () => {
  it("runs patterns case-insensitively, in Unicode mode, on the original input", () => {
    expect(one({ patterns: ["ORDER\\s+#\\d{3}"], priority: 100 }, "order   #123")[0]?.score).toBe(20);
    expect(one({ patterns: ["^\\p{Lu}{3}$"], priority: 100 }, "ABC")[0]?.score).toBe(20);
    expect(one({ patterns: ["😀{2}"], priority: 100 }, "😀😀")[0]?.score).toBe(20);
    // The regex sees the input as typed, not the NFKC form: full-width digits are not \d.
    expect(one({ patterns: ["order\\s*\\d{3}"], priority: 100 }, "order １２３")).toEqual([]);
  });

  it("keeps no state between routes (no g flag, lastIndex irrelevant)", () => {
    const rules = compileRules([agent("a", { patterns: ["ticket-\\d+"], priority: 100 })]);
    for (let i = 0; i < 3; i++) expect(rules.match("ticket-1")).toHaveLength(1);
  });

  it("matches patterns with and without literal factors", () => {
    const rules = compileRules([agent("a", { patterns: ["(refund|return)\\s+\\w+", "\\d{3}-\\d{4}"], priority: 100 })]);
    expect(rules.stats).toMatchObject({ patterns: 2, prefilteredPatterns: 1, alwaysRunPatterns: 1 });
    expect(rules.match("RETURN item, call 555-1234")[0]?.matched_patterns).toEqual([
      "(refund|return)\\s+\\w+",
      "\\d{3}-\\d{4}",
    ]);
    expect(rules.match("return")).toEqual([]);
  });

  it("finds a factor spelled with ſ or the Kelvin sign, as the iu regex does", () => {
    expect(one({ patterns: ["status\\s+\\d"], priority: 100 }, "ſtatus 4")[0]?.score).toBe(20);
    expect(one({ patterns: ["kilo\\d"], priority: 100 }, "\u212Ailo5")[0]?.score).toBe(20);
  });

  it("skips patterns admission refuses (a registry stored before a rule changed), and says so", () => {
    const rules = compileRules([
      agent("a", { keywords: ["x"], patterns: ["(a)\\1", "([unclosed", "fine\\d", "(a+)+$"], priority: 100 }),
    ]);
    expect(rules.stats.patterns).toBe(2);
    expect(rules.stats.skippedPatterns.map((s) => s.pattern)).toEqual(["(a)\\1", "([unclosed"]);
    expect(rules.match("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!")).toEqual([]);
    expect(rules.match("fine7")[0]?.matched_patterns).toEqual(["fine\\d"]);
    expect(rules.match("xaaaa")[0]?.matched_patterns).toEqual(["(a+)+$"]);
  });

  it("reports memory and automaton size", () => {
    const rules = compileRules([agent("a", { keywords: ["refund"], patterns: ["order\\d+"] })]);
    expect(rules.stats).toMatchObject({ keywords: 1, entries: 2, dense: true });
    expect(rules.stats.memoryBytes).toBeGreaterThan(0);
  });
});

describe("isRegexWordUnit", () => {
  it("agrees with \\w under flags iu on every BMP unit", () => {
    const word = /^\w$/iu;
    for (let unit = 0; unit < 65536; unit++) {
      if (isRegexWordUnit(unit) !== word.test(String.fromCharCode(unit))) expect.fail(`U+${unit.toString(16)}`);
    }
    expect(isRegexWordUnit(-1)).toBe(false);
  });
});

describe("compileRules — limit", () => {
  it("returns only the best `limit` matches, in the same order and with the same lists", () => {
    const rules = compileRules(
      Array.from({ length: 12 }, (_, i) =>
        agent(`a${i}`, { keywords: ["refund", `k${i % 4}`], patterns: [`order${i % 3}\\d`], priority: 10 + 7 * i }),
      ),
    );
    const input = "refund k1 k3 order1 order25";
    const all = rules.match(input);
    expect(all.length).toBeGreaterThan(3);
    expect(rules.match(input, 3)).toEqual(all.slice(0, 3));
    expect(rules.match(input, 0)).toEqual([]);
    expect(rules.match(input, 100)).toEqual(all);
  });
});

describe("compileRules — the tenant's pattern budget", () => {
  it("counts instructions after repetition is expanded, and skips in registry order what passes the budget", () => {
    const one = compileRules([agent("a", { patterns: ["ab{3}"], priority: 100 })]);
    // a, b, b, b and the final match.
    expect(one.stats.patternInstructions).toBe(5);
    const rules = compileRules(
      [
        agent("first", { patterns: ["ab{3}", "cd{3}"], priority: 100 }),
        agent("second", { patterns: ["ef{3}"], priority: 100 }),
      ],
      { patternBudget: 10 },
    );
    expect(rules.stats.patternInstructions).toBe(10);
    expect(rules.stats.skippedPatterns).toEqual([
      {
        agent: "second",
        pattern: "ef{3}",
        reason: "is past the tenant's pattern budget of 10 (charged in ASCII literal steps)",
      },
    ]);
    expect(rules.match("abbb cddd efff").map((m) => m.matched_patterns)).toEqual([["ab{3}", "cd{3}"]]);
  });
});
