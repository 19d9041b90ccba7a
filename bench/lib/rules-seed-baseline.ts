/**
 * The rules benchmark's baseline: the naive rule router, the loop a rule tier is before it is
 * compiled. Per route and per agent it lower-cases the input, runs `includes` for every
 * lower-cased keyword (+10), builds `new RegExp(pattern, 'i')` for every pattern and tests
 * the input (+20, invalid patterns ignored), applies `Math.round(score * (priority / 100))`
 * and a confidence formula, keeps scores > 0 and sorts them descending. Registry look-ups
 * a router would await around this loop are left out, which only flatters the baseline.
 * (docs/benchmarks.md, Rule tier.)
 */

/** The slice of an agent definition the naive scorer reads. */
export interface SeedAgent {
  name: string;
  triggers?: { keywords?: string[]; patterns?: string[]; priority?: number };
}

/** One scored agent, as the naive scorer returns it. */
export interface SeedScore {
  agent: SeedAgent;
  score: number;
  confidence: number;
  matchedKeywords: string[];
  matchedPatterns: string[];
}

function seedScore(agent: SeedAgent, input: string): SeedScore {
  const matchedKeywords: string[] = [];
  const matchedPatterns: string[] = [];
  let points = 0;
  const haystack = input.toLowerCase();
  for (const keyword of agent.triggers?.keywords ?? []) {
    if (!haystack.includes(keyword.toLowerCase())) continue;
    points += 10;
    matchedKeywords.push(keyword);
  }
  for (const pattern of agent.triggers?.patterns ?? []) {
    let regex: RegExp;
    try {
      regex = new RegExp(pattern, "i");
    } catch {
      continue;
    }
    if (!regex.test(input)) continue;
    points += 20;
    matchedPatterns.push(pattern);
  }
  const score = Math.round(points * ((agent.triggers?.priority ?? 50) / 100));
  const bonus = matchedKeywords.length + matchedPatterns.length > 1 ? 10 : 0;
  return { agent, score, confidence: Math.min(100, Math.min(100, score) + bonus), matchedKeywords, matchedPatterns };
}

/** Every agent with a score > 0, best first (a router takes the first). */
export function seedRoute(agents: readonly SeedAgent[], input: string): SeedScore[] {
  const scores: SeedScore[] = [];
  for (const agent of agents) {
    if (!agent.triggers) continue;
    const scored = seedScore(agent, input);
    if (scored.score > 0) scores.push(scored);
  }
  return scores.sort((a, b) => b.score - a.score);
}
