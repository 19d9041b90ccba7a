/**
 * Synthetic registries and inputs for the rule-tier benchmark. Keywords come from a fixed
 * vocabulary of 4,000 generated words (so at 10,000 agents each word is a keyword of about 50
 * agents, as in a large real registry); filler text comes from a disjoint vocabulary, so a
 * "miss" input touches no keyword and a "hit" input touches a controlled few.
 */
import { type SeededRandom, seededRandom as seeded } from "../../src/lib/prng";
import { AgentDefinition } from "../../src/schemas/agent";

type Rand = SeededRandom;

const ONSETS = [
  "b",
  "d",
  "f",
  "g",
  "k",
  "l",
  "m",
  "n",
  "p",
  "r",
  "s",
  "t",
  "v",
  "z",
  "br",
  "tr",
  "st",
  "pl",
  "kr",
  "sh",
];
const VOWELS = ["a", "e", "i", "o", "u", "ai", "ou"];

function words(rand: Rand, count: number, taken: Set<string>): string[] {
  const out: string[] = [];
  while (out.length < count) {
    let word = "";
    for (let s = 2 + rand.int(3); s > 0; s--) word += rand.pick(ONSETS) + rand.pick(VOWELS);
    if (rand.int(3) === 0) word += rand.pick(["n", "r", "s", "x"]);
    if (taken.has(word)) continue;
    taken.add(word);
    out.push(word);
  }
  return out;
}

export interface Corpus {
  vocabulary: string[];
  filler: string[];
}

/** The keyword vocabulary (4,000 words) and a disjoint filler vocabulary (2,000 words). */
export function corpus(seed = 1): Corpus {
  const rand = seeded(seed);
  const taken = new Set<string>();
  return { vocabulary: words(rand, 4000, taken), filler: words(rand, 2000, taken) };
}

/**
 * `count` enabled agents, each with 20 keywords (2 of them two-word phrases) and 5 patterns with
 * agent-specific literals.
 */
export function registry(count: number, c: Corpus, seed = 2): AgentDefinition[] {
  const rand = seeded(seed + count);
  const word = (): string => rand.pick(c.vocabulary);
  return Array.from({ length: count }, (_, i) => {
    const keywords = new Set<string>();
    while (keywords.size < 18) keywords.add(word());
    keywords.add(`${word()} ${word()}`);
    keywords.add(`${word()} ${word()}`);
    const code = `tk${i.toString(36)}`;
    const patterns = [
      `${word()}\\s*#?\\d{6}`,
      `(${word()}|${word()})\\s+\\w+`,
      `${code}-\\d{3,5}`,
      `\\b${word()}(?:ing|ed)?\\b`,
      `${word()}\\s+(?:${word()}|${word()})`,
    ];
    return AgentDefinition.parse({
      name: `agent-${i}`,
      description: `synthetic agent ${i}`,
      triggers: { keywords: [...keywords], patterns, priority: 30 + rand.int(71) },
    });
  });
}

/** The same agents in the shape the naive baseline reads. */
export function seedAgents(
  agents: readonly AgentDefinition[],
): { name: string; triggers: { keywords: string[]; patterns: string[]; priority: number } }[] {
  return agents.map((a) => ({
    name: a.name,
    triggers: { keywords: a.triggers.keywords, patterns: a.triggers.patterns, priority: a.triggers.priority },
  }));
}

/**
 * miss: no keyword; one: one agent's code-pattern match (one agent at any registry size);
 * hit: 3 keywords and a code match; hit-utf8: the same with non-ASCII text (NFKC path).
 */
export type InputKind = "miss" | "one" | "hit" | "hit-utf8";

/**
 * Inputs of `bytes` UTF-16 units (bytes, for ASCII). "miss": filler words and punctuation only.
 * "one": the same with one string matching a random agent's code pattern. "hit": 3 keywords of
 * random agents and one code match. "hit-utf8": "hit" with a few non-ASCII words (two passes).
 */
export function inputs(
  kind: InputKind,
  bytes: number,
  agents: readonly AgentDefinition[],
  c: Corpus,
  count = 64,
  seed = 3,
): string[] {
  const rand = seeded(seed + bytes + kind.length * 1000);
  return Array.from({ length: count }, () => {
    const pieces: string[] = [];
    let length = 0;
    while (length < bytes) {
      const piece = rand.pick(c.filler) + rand.pick([" ", " ", " ", ", ", ". ", "\n"]);
      pieces.push(rand.int(8) === 0 ? piece[0]!.toUpperCase() + piece.slice(1) : piece);
      length += piece.length;
    }
    // Hits avoid the last pieces, which the trim below may cut.
    const slot = (): number => rand.int(Math.max(1, pieces.length - 3));
    if (kind === "hit" || kind === "hit-utf8")
      for (let k = 0; k < 3; k++) pieces[slot()] = `${rand.pick(rand.pick(agents).triggers.keywords)} `;
    if (kind !== "miss") pieces[slot()] = `tk${rand.int(agents.length).toString(36)}-${1000 + rand.int(9000)} `;
    if (kind === "hit-utf8")
      for (let k = 0; k < 3; k++) pieces[slot()] = rand.pick(["café ", "naïve ", "退款。", "Grüße — ", "ＯＫ "]);
    let text = pieces.join("");
    while (text.length > bytes) text = text.slice(0, text.lastIndexOf(" ", bytes - 1));
    // A request body arrives as a fresh flat string (JSON.parse); joins and slices do not.
    return JSON.parse(JSON.stringify(text)) as string;
  });
}
