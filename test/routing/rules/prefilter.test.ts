import { describe, expect, it } from "vitest";
import { compileRules } from "../../../src/routing/rules";
import { AgentDefinition } from "../../../src/schemas/agent";
import { randomPattern } from "./random-patterns";
import { prng, referenceMatch } from "./reference-matcher";

const agent = (name: string, keywords: string[], patterns: string[], priority: number): AgentDefinition =>
  AgentDefinition.parse({ name, triggers: { keywords, patterns, priority } });

const TRICKY_PATTERNS = [
  "order\\s*#?\\d{6}",
  "(refund|return)\\s+\\w+",
  "\\bvip\\b",
  "acct-?\\d{4,}",
  "(?:ship|deliver)(?:ping|y|ed)",
  "colou?r",
  "[Ss]tatus:\\s*(open|closed)",
  "^hello",
  "bye$",
  "\\d{3}-\\d{4}",
  "(?<code>err)[-_]?\\d+",
  "KILO\\w*",
  "stake\\.holder",
  "(?:a|b)+c{2}",
  "退款\\d*",
  "über\\s+\\w+",
  "Ω\\d",
  "\\bkilo",
  "#tag\\b",
  "\\b#tag",
  "stake$",
  "order\\s+(?:now|later)",
];

const INPUT_PIECES = [
  "order #123456",
  "ORDER123456",
  "refund it",
  "Return policy",
  "VIP",
  "vipers",
  "acct-12345",
  "acct999",
  "shipping",
  "delivered",
  "color",
  "COLOUR",
  "status: Open",
  "Status:closed",
  "hello there",
  "say bye",
  "555-1234",
  "err_42",
  "ERR-7",
  "\u212Ailo",
  "ſtake.holder",
  "stake holder",
  "aabcc",
  "退款123",
  "Über alles",
  "ω7",
  "Ω8",
  "ｏｒｄｅｒ #123456",
  "credit  card",
  "退款",
  "我要refund谢谢",
  "\n",
  "  ",
  "!",
  "😀",
  "ſkilo",
  "xkilo",
  "_kilo",
  "#tag",
  "x#tag",
  "#tagx",
  "stake",
  "order now",
  "order\tLATER",
  "orders now",
  "order",
];

describe("prefilter equivalence", () => {
  it("tries anchored patterns that share a factor, predicates among them, without changing any result", () => {
    // \p{…} and non-ASCII literals run as one-code-point predicates inside the NFA.
    const tails = [
      "\\s*#?\\p{Nd}{6}",
      "\\s+now",
      "\\s+(?:later|soon)\\p{L}*",
      "-\\p{Nd}+",
      "ed\\b",
      "s?\\s+x",
      "(?:ly|ing).",
      "\\.\\p{L}?",
      "#\\p{N}",
      "é+",
    ];
    const agents = Array.from({ length: 40 }, (_, i) =>
      agent(`g${i}`, [], [`order${tails[i % tails.length]}`, `\\border${i}`], 100),
    );
    const rules = compileRules(agents);
    expect(rules.stats.anchoredPatterns).toBe(80);
    expect(rules.stats.predicates).toBeGreaterThan(0);
    const rand = prng(17);
    const pieces = [
      "order",
      "ORDER",
      " ",
      "#",
      "123456",
      "now",
      "later",
      "-7",
      "ed",
      "s",
      "x",
      "ly",
      ".",
      "3",
      "orders",
      "border",
      "é",
      "É",
      "٣",
    ];
    for (let n = 0; n < 500; n++) {
      const input = Array.from({ length: 1 + rand.int(8) }, () => rand.pick(pieces)).join("");
      expect(rules.match(input), JSON.stringify(input)).toEqual(referenceMatch(agents, input));
    }
  });

  it("gives exactly the result of running every regex, on tricky patterns and inputs", () => {
    const agents = TRICKY_PATTERNS.map((p, i) => agent(`p${i}`, [], [p], 100));
    const rules = compileRules(agents);
    expect(rules.stats.prefilteredPatterns).toBeGreaterThan(10);
    const rand = prng(11);
    for (let n = 0; n < 400; n++) {
      const input = Array.from({ length: 1 + rand.int(4) }, () => rand.pick(INPUT_PIECES)).join(
        rand.pick([" ", "", "\t"]),
      );
      expect(rules.match(input), JSON.stringify(input)).toEqual(referenceMatch(agents, input));
    }
  });

  it("gives exactly the result of running every regex, on random patterns and their matches", () => {
    const rand = prng(23);
    for (let round = 0; round < 20; round++) {
      const generated = Array.from({ length: 30 }, () => randomPattern(rand));
      const agents = Array.from({ length: 10 }, (_, i) =>
        agent(
          `r${i}`,
          [],
          generated.slice(i * 3, i * 3 + 3).map((g) => g.source),
          10 * (1 + rand.int(10)),
        ),
      );
      const rules = compileRules(agents);
      for (let n = 0; n < 30; n++) {
        const input = Array.from({ length: 1 + rand.int(3) }, () => rand.pick(generated).sample).join(
          rand.pick([" ", "", "é", "退"]),
        );
        expect(rules.match(input), `${JSON.stringify(input)} vs ${generated.map((g) => g.source).join(" , ")}`).toEqual(
          referenceMatch(agents, input),
        );
      }
    }
  });
});

const KEYWORD_POOL = [
  "refund",
  "Refund",
  "order",
  "credit card",
  "card",
  "退款",
  "退",
  "申请退款",
  "VIP会员",
  "会员",
  "vip",
  "ΟΔΟΣ",
  "οδος",
  "привет",
  "café",
  "cafe",
  "c++",
  "#help",
  "ship",
  "shipping",
  "ｒｅｆｕｎｄ",
  "返金",
  "キャンセル",
  "환불",
  "คืนเงิน",
  "e-mail",
  "mail",
  "status: open",
  "a",
  "ab",
  "order status",
];
const TEXT_PIECES = [
  ...KEYWORD_POOL,
  "REFUNDS",
  "prerefund",
  "Credit\n\nCARD",
  "cafe\u0301",
  "ΟΔΟΣ",
  "我想",
  "。",
  "，",
  " ",
  "  ",
  "\t",
  "-",
  "_",
  "'s",
  "2",
  "x",
  "😀",
  "ſ",
  "ﬁ",
  "İstanbul",
  "ＶＩＰ",
  "ship's",
  "cards",
  "shipping!",
  "status:  OPEN",
];

describe("keyword matching agrees with an independent regex oracle", () => {
  it("on random registries and inputs mixing scripts, case, whitespace and compatibility forms", () => {
    const rand = prng(5);
    for (let round = 0; round < 30; round++) {
      const agents = Array.from({ length: 8 }, (_, i) =>
        agent(
          `k${i}`,
          Array.from({ length: 1 + rand.int(6) }, () => rand.pick(KEYWORD_POOL)),
          rand.int(3) === 0 ? [rand.pick(TRICKY_PATTERNS)] : [],
          rand.pick([0, 5, 29, 50, 55, 80, 100]),
        ),
      );
      const dense = compileRules(agents);
      const sparse = compileRules(agents, { denseCellLimit: 0 });
      for (let n = 0; n < 40; n++) {
        const input = Array.from({ length: 1 + rand.int(8) }, () => rand.pick(TEXT_PIECES)).join(
          rand.pick(["", " ", " ", "\n"]),
        );
        const expected = referenceMatch(agents, input);
        expect(dense.match(input), JSON.stringify(input)).toEqual(expected);
        expect(sparse.match(input), JSON.stringify(input)).toEqual(expected);
      }
    }
  });
});
