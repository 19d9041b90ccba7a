/**
 * Registries for the tests of stored routers (router-codec, cold-route): a small team with
 * several scripts, patterns (one with a non-ASCII class), a disabled and a keyword-only agent;
 * and synthetic registries of any size, with inputs that hit and miss their vocabulary.
 */
import { type SeededRandom, seededRandom } from "../../src/lib/prng";
import { AgentDefinition } from "../../src/schemas/agent";

export const team: AgentDefinition[] = [
  {
    name: "billing",
    description: "Invoices, refunds and payments",
    triggers: {
      keywords: ["refund", "invoice", "退款"],
      patterns: ["charged\\s+twice", "INV-\\d{6}"],
      examples: ["I want a refund for my order", "why was I charged twice", "我要退款", "发票在哪里下载"],
    },
  },
  {
    name: "technical",
    description: "Bugs, errors and login problems",
    triggers: {
      keywords: ["error", "crash"],
      patterns: ["[äöü]berweisung fehlgeschlagen"],
      examples: ["the app crashes when I open it", "I get an error on the settings page", "登录的时候报错"],
    },
  },
  { name: "sales", description: "Pricing and demos", triggers: { keywords: ["pricing", "demo", "quote"] } },
  {
    name: "archive",
    enabled: false,
    triggers: { keywords: ["refund"], examples: ["old refund requests"] },
  },
].map((a) => AgentDefinition.parse(a));

const SYLLABLES = ["ka", "lo", "mi", "ne", "tu", "ra", "si", "po", "ve", "zu", "bri", "sta", "tro"];

/** `count` distinct made-up words. */
export function vocabulary(rand: SeededRandom, count: number): string[] {
  const out = new Set<string>();
  while (out.size < count) out.add(Array.from({ length: 2 + rand.int(3) }, () => rand.pick(SYLLABLES)).join(""));
  return [...out];
}

/** `agents` agents, each with 2 keywords, 1 pattern and 3 examples over a shared vocabulary. */
export function synthetic(agents: number, seed = 7): { agents: AgentDefinition[]; words: string[] } {
  const rand = seededRandom(seed);
  const words = vocabulary(rand, 400);
  const sentence = (n: number) => Array.from({ length: n }, () => rand.pick(words)).join(" ");
  return {
    words,
    agents: Array.from({ length: agents }, (_, i) =>
      AgentDefinition.parse({
        name: `agent-${String(i).padStart(4, "0")}`,
        description: `synthetic agent ${i}`,
        triggers: {
          keywords: [rand.pick(words), rand.pick(words)],
          patterns: [`tk${i.toString(36)}-\\d{4}`],
          examples: [sentence(6), sentence(6), sentence(6)],
        },
      }),
    ),
  };
}

/** Inputs: examples, known words, unknown ones, pattern hits, other scripts, and nothing at all. */
export function inputs(
  agents: readonly AgentDefinition[],
  words: readonly string[],
  count: number,
  seed = 11,
): string[] {
  const rand = seededRandom(seed);
  const examples = agents.flatMap((a) => a.triggers.examples);
  const out = [
    "",
    "hello",
    "我要退款 refund",
    "Überweisung fehlgeschlagen",
    "charged twice INV-123456",
    ...examples.slice(0, 3),
  ];
  while (out.length < count) {
    const n = 1 + rand.int(8);
    const parts = Array.from({ length: n }, () => {
      if (rand.int(4) === 0) return `zz${rand.int(1000)}`;
      const word = rand.pick(words);
      return rand.int(2) === 0 ? word : word.toUpperCase();
    });
    if (rand.int(4) === 0 && examples.length > 0) parts.push(rand.pick(examples));
    if (rand.int(3) === 0) parts.push(`tk${rand.int(60).toString(36)}-1234`);
    out.push(parts.join(rand.int(2) === 0 ? " " : ", "));
  }
  return out;
}
