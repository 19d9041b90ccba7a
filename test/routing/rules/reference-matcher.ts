/**
 * An independent, slow oracle for the rule tier: per agent, one regex per keyword over the
 * NFKC/lower-cased input (boundaries as lookarounds) and every admitted pattern run on the input
 * by V8's own regex engine, with no automaton and no prefilter. The compiled tier must agree with it on every input.
 */

import { checkPattern, PATTERN_FLAGS } from "../../../src/routing/rules/pattern-safety";
import type { RuleMatch } from "../../../src/routing/types";
import type { AgentDefinition } from "../../../src/schemas/agent";

const UNSPACED =
  "\\p{scx=Han}\\p{scx=Hiragana}\\p{scx=Katakana}\\p{scx=Hangul}\\p{scx=Bopomofo}\\p{scx=Thai}\\p{scx=Lao}\\p{scx=Khmer}\\p{scx=Myanmar}";
const WORD = `[[\\p{L}\\p{M}\\p{N}]--[${UNSPACED}]]`;
const IS_WORD = new RegExp(`^${WORD}$`, "v");

const fold = (s: string): string => s.normalize("NFKC").toLowerCase().replace(/ς/g, "σ");
const escapeRegex = (s: string): string => s.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");

function keywordRegex(keyword: string): RegExp | null {
  const normalized = fold(keyword).replace(/\s+/g, " ").trim();
  if (normalized === "") return null;
  const chars = [...normalized];
  const body = normalized.split(" ").map(escapeRegex).join("\\s+");
  const before = IS_WORD.test(chars[0]!) ? `(?<!${WORD})` : "";
  const after = IS_WORD.test(chars[chars.length - 1]!) ? `(?!${WORD})` : "";
  return new RegExp(before + body + after, "v");
}

/** Seed scoring the slow way; same contract as `CompiledRules.match`. */
export function referenceMatch(agents: readonly AgentDefinition[], input: string): RuleMatch[] {
  const text = fold(input);
  const results: (RuleMatch & { index: number })[] = [];
  agents.forEach((agent, index) => {
    if (!agent.enabled) return;
    const seen = new Set<string>();
    const matchedKeywords: string[] = [];
    for (const keyword of agent.triggers.keywords) {
      const key = fold(keyword).replace(/\s+/g, " ").trim();
      if (seen.has(key)) continue;
      seen.add(key);
      if (keywordRegex(keyword)?.test(text)) matchedKeywords.push(keyword);
    }
    const matchedPatterns: string[] = [];
    for (const pattern of new Set(agent.triggers.patterns)) {
      if (checkPattern(pattern) === null && new RegExp(pattern, PATTERN_FLAGS).test(input))
        matchedPatterns.push(pattern);
    }
    const raw = 10 * matchedKeywords.length + 20 * matchedPatterns.length;
    const score = Math.round(raw * (agent.triggers.priority / 100));
    if (score > 0)
      results.push({
        agent: agent.name,
        score,
        matched_keywords: matchedKeywords,
        matched_patterns: matchedPatterns,
        index,
      });
  });
  results.sort((a, b) => b.score - a.score || a.index - b.index);
  return results.map(({ index: _index, ...match }) => match);
}

/** Property tests draw from a seeded source so failures reproduce. */
export { seededRandom as prng } from "../../../src/lib/prng";
