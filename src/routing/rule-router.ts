/**
 * The rule tier's decision: keyword and pattern rules plus a lexical classifier trained on the
 * agents' examples, combined into one choice and one calibrated confidence.
 *
 * ## How the rule tier decides
 *
 * 1. **Evidence.** Keywords and patterns give the rule score (= (10 × keywords +
 *    20 × patterns) × priority / 100). A classifier is compiled with the registry from every
 *    enabled agent's `triggers.examples` plus its keywords (an agent without examples
 *    contributes its keywords, title, description and name instead). It has two parts:
 *    - a multinomial logistic regression (trained at compile time, about 0.6 s for 10 agents ×
 *      1,500 examples) over word stems, word bigrams, word character 3-grams, and for Chinese
 *      and Japanese character unigrams and bigrams — which agent the words point to;
 *    - a TF-IDF nearest-neighbour index over the same examples — how close the input is to
 *      something an agent was actually shown (function words and very common terms left out),
 *      and which examples those are.
 * 2. **Choice.** Each agent's classifier logit plus 4 × its rule score / 10 (the rule weight,
 *    fitted); the highest wins (ties: registry order). Candidates are the best 3.
 * 3. **Confidence** (0–100) estimates the probability that routing there is right. It is a
 *    logistic function of: the candidate's softmax probability and its margin over the best
 *    other agent (on the combined logits), the similarity of its nearest example, the share of
 *    the input made of words some example contains, its own and its rivals' keyword/pattern
 *    hits, and how many examples the agent has (the classifier signals get their own slopes
 *    for keyword-only agents and per order of magnitude of examples). A registry of one agent
 *    weighs it against "none of these" and has its own weights. All weights were fitted offline
 *    on CLINC150 train (Larson et al., 2019, CC BY 3.0) by 5-fold cross-validation over
 *    registries of 1, 3 and 10 agents with 1 to ~80 examples per intent or keywords only; its
 *    out-of-scope rows (and, in the smaller registries, the left-out domains) count as wrong
 *    for every agent, weighted as 6% of the traffic (10% where agents have all their
 *    examples). `npx tsx bench/fit-calibration.ts --write` refits them. So at threshold T the rule tier is right about T% of the time on
 *    traffic like that: on CLINC150 val, precision at 80 is ~99% and 97% of out-of-scope
 *    requests stay below it. Unfamiliar input (few known words, no close example) gets a low
 *    confidence instead of its nearest agent.
 * 4. **Not mine.** `agent` is null when nothing is known about the input (no known word, no
 *    rule hit: confidence 0, no candidates) or the confidence is below 50 — more likely wrong
 *    than right; candidates still show the nearest agents. The hybrid sends anything under its
 *    threshold (default 80) to the LLM.
 * 5. **Explanation** (`explanation`, a plain object built when first read): the signals
 *    above, the chosen agent's nearest examples with their cosine similarity, the input terms
 *    that most separated it from the runner-up (with their weight in the logit difference),
 *    and the matched keywords/patterns.
 *
 * Keyword-only registries work too: a keyword or pattern of one agent only is strong evidence
 * (on CLINC150 with 10 derived keywords per domain, ~96% precision at 80); hits for several
 * agents are not; a pattern at low priority weighs less.
 */
import type { AgentDefinition } from "../schemas/agent";
import { type Calibration, type CandidateEvidence, confidenceOf } from "./classifier/calibration";
import { CALIBRATION_PARAMS } from "./classifier/calibration-params";
import { extractFeatures } from "./classifier/features";
import { type Classification, classifierFromImage, type LexicalClassifier } from "./classifier/lexical-classifier";
import { compileAgentPart, type LinkOptions, linkRouterImage, type RouteAgent, type RouterImage } from "./router-image";
import { decisionOf, type RuleEvidence, type ScoredCandidate } from "./rule-decision";
import { type RuleStats, rulesFromImage } from "./rules";
import type { RuleDecision, RuleMatch, RuleRouter } from "./types";

/** The compiled rule tier plus its raw evidence, for benchmarks and calibration. */
export interface CompiledRuleRouter extends RuleRouter {
  evidence(input: string, k?: number): RuleEvidence;
  readonly agents: readonly string[];
  /** What the keyword and pattern rules hold (pattern budget, skipped patterns, automaton size). */
  readonly rules: RuleStats;
}

export interface RuleRouterOptions {
  /** Calibration to use instead of the fitted one (the fit script passes its candidates). */
  calibration?: Calibration;
}

/** Compiles the rule tier for a registry snapshot. Disabled agents are left out. */
export function compileRuleRouter(
  agents: readonly AgentDefinition[],
  options: RuleRouterOptions & LinkOptions = {},
): CompiledRuleRouter {
  return routerFromImage(linkRouterImage(agents.map(compileAgentPart), options), options);
}

/** The rule tier over a linked image (router-image.ts): no compiling, no training. */
export function routerFromImage(image: RouterImage, options: RuleRouterOptions = {}): CompiledRuleRouter {
  return routerFromShards([wrapShard(image)], options);
}

/** One shard's image, wrapped: a router version keeps the wrapped shards it shares with the last. */
export interface WrappedShard {
  /**
   * What a router reads of the image besides its wrapped tiers: the agents, the enabled ones'
   * names and example counts (the rule and classifier images are not kept: their wrapped forms
   * hold narrower copies of some of their arrays).
   */
  image: Pick<RouterImage, "agents" | "exampleCounts"> & { names: readonly string[] };
  rules: ReturnType<typeof rulesFromImage>;
  classifier: LexicalClassifier | null;
  /** What it holds: its rule tier, its classifier and its agents' list (docs/scaling.md, "Memory"). */
  bytes: number;
}

/** Wraps a shard's image (its feature table and scratch are all that is built). */
export function wrapShard(image: RouterImage): WrappedShard {
  const rules = rulesFromImage(image.rules);
  const classifier = image.classifier === null ? null : classifierFromImage(image.classifier);
  return {
    image: { agents: image.agents, names: image.rules.tables.names, exampleCounts: image.exampleCounts },
    rules,
    classifier,
    bytes: rules.stats.memoryBytes + (classifier?.memoryBytes ?? 0) + agentListBytes(image.agents),
  };
}

/**
 * The agents' list as V8 holds it, about: each agent's objects and arrays, its strings (one
 * byte a code unit for Latin-1, as nearly all are, two otherwise) — 270 bytes an agent of the
 * churn bench's registry, as measured in Node.
 */
function agentListBytes(agents: readonly RouteAgent[]): number {
  const text = (s: string | undefined) => {
    if (s === undefined) return 0;
    let wide = false;
    for (let i = 0; i < s.length && !wide; i++) wide = s.charCodeAt(i) > 0xff;
    return 16 + (wide ? 2 : 1) * s.length;
  };
  let bytes = 0;
  for (const a of agents) {
    bytes += 120 + text(a.name) + text(a.title) + text(a.description);
    for (const k of a.triggers.keywords) bytes += 8 + text(k);
  }
  return bytes;
}

/** A route's working arrays over all agents. */
interface Scratch {
  logits: Float64Array;
  /** Keyword hits (each weighed by its share, see shareOf) + 2 × pattern hits. */
  hits: Float64Array;
  /** The rule score with keywords weighed the same way. */
  scores: Float64Array;
  /** Each agent's nearest-example similarity. */
  sims: Float64Array;
  byAgent: (RuleMatch | null)[];
  classifications: (Classification | null)[];
}

interface Shard extends WrappedShard {
  /** Global index of the shard's first agent. */
  offset: number;
  count: number;
}

/**
 * The rule tier over the shards of a registry (router-build.ts): each shard matches and
 * classifies its own agents, and their evidence meets in one set of logits. With one shard
 * this is exactly the registry's router; with several, an agent's classifier logit and
 * similarity come from its own shard's vocabulary, the share of known words is the best any
 * shard knows, and ties go by shard, then name.
 */
export function routerFromShards(
  wrapped: readonly WrappedShard[],
  options: RuleRouterOptions = {},
): CompiledRuleRouter {
  const calibration = options.calibration ?? CALIBRATION_PARAMS;
  const names: string[] = [];
  const exampleCount: number[] = [];
  const shards: Shard[] = [];
  let tableBytes = 0;
  for (const shard of wrapped) {
    const { image } = shard;
    shards.push({ ...shard, offset: names.length, count: image.names.length });
    names.push(...image.names);
    exampleCount.push(...image.exampleCounts);
    tableBytes += shard.bytes;
  }
  // An agent's keywords are also examples of its classifier: the more real examples it has,
  // the more its logit already holds what they say, so its rule score weighs less.
  // (Read per route: the calibration fit changes the weights of one compiled router.)
  let ruleDecay = Number.NaN;
  const ruleScale = new Float64Array(exampleCount.length);
  const ruleWeightsNow = (): Float64Array => {
    const decay = (calibration as Calibration).ruleDecay ?? 0;
    if (decay !== ruleDecay) {
      ruleDecay = decay;
      for (let a = 0; a < ruleScale.length; a++) ruleScale[a] = 1 / (1 + decay * Math.log10(1 + exampleCount[a]!));
    }
    return ruleScale;
  };
  // A keyword's share of its examples' evidence (lexical-classifier.ts), per shard, agent and keyword.
  const shares = shards.map(() => new Map<string, number>());
  const shareOf = (j: number, a: number, keyword: string): number => {
    const cache = shares[j] as Map<string, number>;
    const key = `${a}\u0000${keyword}`;
    let v = cache.get(key);
    if (v === undefined) {
      v = shards[j]?.classifier?.keywordShare(keyword, a) ?? 1;
      cache.set(key, v);
    }
    return v;
  };
  const shardOf = new Int32Array(names.length);
  for (const [k, shard] of shards.entries()) shardOf.fill(k, shard.offset, shard.offset + shard.count);
  const count = names.length;
  const scratch = (): Scratch => ({
    logits: new Float64Array(count),
    hits: new Float64Array(count),
    scores: new Float64Array(count),
    sims: new Float64Array(count),
    byAgent: new Array<RuleMatch | null>(count).fill(null),
    classifications: shards.map(() => null),
  });
  // A route that never awaits reuses one scratch; one that waits for its turn gets its own.
  const shared = scratch();
  const unknown = count === 0 || shards.every((s) => s.classifier === null);

  const evidence = (input: string, k = 3): RuleEvidence =>
    unknown
      ? { candidates: [], classification: null }
      : evidenceFrom(
          input,
          k,
          shards.map((s) => s.rules.match(input)),
          shared,
        );

  const evidenceInTurns = async (input: string, k: number, turn?: () => Promise<void>): Promise<RuleEvidence> => {
    if (unknown) return { candidates: [], classification: null };
    const matches: RuleMatch[][] = [];
    for (const shard of shards) matches.push(await shard.rules.matchInTurns(input, Number.POSITIVE_INFINITY, turn));
    return evidenceFrom(input, k, matches, scratch());
  };

  const evidenceFrom = (input: string, k: number, matchesOf: RuleMatch[][], work: Scratch): RuleEvidence => {
    const { logits, hits, scores, sims, byAgent, classifications } = work;
    byAgent.fill(null);
    hits.fill(0);
    scores.fill(0);
    let matched = 0;
    let knownMass = 0;
    // Every shard reads the same features: extracted once.
    const features = shards.length > 1 ? extractFeatures(input) : undefined;
    for (const [j, shard] of shards.entries()) {
      const c = shard.classifier?.classify(input, features) ?? null;
      classifications[j] = c;
      if (c !== null && c.knownMass > knownMass) knownMass = c.knownMass;
      const local = new Map<string, number>();
      const matches = matchesOf[j] ?? [];
      matched += matches.length;
      if (matches.length > 0) for (let a = 0; a < shard.count; a++) local.set(names[shard.offset + a] as string, a);
      for (const m of matches) {
        const a = local.get(m.agent);
        if (a === undefined) continue;
        byAgent[shard.offset + a] = m;
        // A keyword counts for the share of its examples' evidence that is this agent's: one
        // that other agents' examples use as well is weaker evidence (patterns count whole).
        let keywords = 0;
        for (const k of m.matched_keywords) keywords += shareOf(j, a, k);
        const full = m.matched_keywords.length + 2 * m.matched_patterns.length;
        hits[shard.offset + a] = keywords + 2 * m.matched_patterns.length;
        scores[shard.offset + a] = full === 0 ? 0 : (m.score * (hits[shard.offset + a] as number)) / full;
      }
      for (let a = 0; a < shard.count; a++) logits[shard.offset + a] = c === null ? 0 : (c.logits[a] as number);
      if (c === null || shard.classifier === null) sims.fill(0, shard.offset, shard.offset + shard.count);
      else sims.set(shard.classifier.nearestByAgent(c), shard.offset);
    }
    const first = classifications[0] ?? null;
    if (knownMass === 0 && matched === 0) return { candidates: [], classification: first };
    const ruleScale = ruleWeightsNow();
    const weight = calibration.ruleWeight;
    for (let a = 0; a < count; a++) {
      logits[a] = (logits[a] as number) + (weight * (ruleScale[a] as number) * (scores[a] as number)) / 10;
    }
    // The best k by combined logit (at least 2, for the margin); ties keep registry order.
    const keep = Math.max(k, 2);
    const order: number[] = [];
    for (let a = 0; a < count; a++) {
      const v = logits[a] as number;
      if (order.length === keep && v <= (logits[order[keep - 1] as number] as number)) continue;
      let j = order.length < keep ? order.length : keep - 1;
      if (order.length < keep) order.push(a);
      while (j > 0 && (logits[order[j - 1] as number] as number) < v) {
        order[j] = order[j - 1] as number;
        j--;
      }
      order[j] = a;
    }
    const top = order[0] as number;
    const second = order.length > 1 ? (order[1] as number) : -1;
    // A single agent competes with "none of these" at logit 0 (see softmax.ts).
    const max = count === 1 ? Math.max(logits[top] as number, 0) : (logits[top] as number);
    let sum = count === 1 ? Math.exp(-max) : 0;
    for (let a = 0; a < count; a++) sum += Math.exp((logits[a] as number) - max);
    // The two best similarities, so each candidate can be weighed against the nearest other agent.
    let bestSim = 0;
    let bestSimAgent = -1;
    let nextSim = 0;
    for (let a = 0; a < count; a++) {
      const v = sims[a] as number;
      if (v > bestSim) {
        nextSim = bestSim;
        bestSim = v;
        bestSimAgent = a;
      } else if (v > nextSim) nextSim = v;
    }
    let mostHits = 0;
    let mostHitsAgent = -1;
    let nextHits = 0;
    for (let a = 0; a < count; a++) {
      const h = hits[a] as number;
      if (h > mostHits) {
        nextHits = mostHits;
        mostHits = h;
        mostHitsAgent = a;
      } else if (h > nextHits) nextHits = h;
    }
    const candidates = order.slice(0, k).map((a): ScoredCandidate => {
      const other = a === top ? second : top;
      const shard = shards[shardOf[a] as number] as Shard;
      const c = classifications[shardOf[a] as number] ?? null;
      const ev: CandidateEvidence = {
        logit: logits[a] as number,
        probability: Math.exp((logits[a] as number) - max) / sum,
        margin: (logits[a] as number) - (other >= 0 ? (logits[other] as number) : 0),
        countMargin: c === null ? 0 : countMargin(c.countLogits, a - shard.offset),
        similarity: sims[a] as number,
        similarityMargin: (sims[a] as number) - (a === bestSimAgent ? nextSim : bestSim),
        knownMass,
        ruleHits: hits[a] as number,
        otherRuleHits: a === mostHitsAgent ? nextHits : mostHits,
        exampleCount: exampleCount[a] as number,
        singleAgent: count === 1,
        agentCount: count,
      };
      return {
        index: a - shard.offset,
        shard: shardOf[a] as number,
        agent: names[a] as string,
        evidence: ev,
        match: byAgent[a] ?? null,
        confidence: confidenceOf(ev, calibration),
      };
    });
    return { candidates, classification: classifications[shardOf[top] as number] ?? first };
  };

  const classifierOf = (shard: number): LexicalClassifier | null => shards[shard]?.classifier ?? null;
  const decide = (input: string): RuleDecision => decisionOf(evidence(input), classifierOf);
  const decideInTurns = async (input: string, turn?: () => Promise<void>): Promise<RuleDecision> =>
    decisionOf(await evidenceInTurns(input, 3, turn), classifierOf);

  return {
    decide,
    decideInTurns,
    evidence,
    agents: names,
    rules: mergeStats(shards.map((s) => s.rules.stats)),
    // Per agent: its name's place, examples, weights and a route's scratch (about 230 bytes in Node).
    memoryBytes: tableBytes + 230 * count,
  };
}

/** Agent a's logit minus the best other agent's in one model's logits (0 with one agent). */
function countMargin(logits: readonly number[], a: number): number {
  let other = Number.NEGATIVE_INFINITY;
  for (let k = 0; k < logits.length; k++) if (k !== a && (logits[k] as number) > other) other = logits[k] as number;
  return other === Number.NEGATIVE_INFINITY ? 0 : (logits[a] as number) - other;
}

/** The rule statistics of a sharded registry, summed. */
function mergeStats(stats: readonly RuleStats[]): RuleStats {
  const [first, ...rest] = stats;
  if (first === undefined) throw new RangeError("a router has at least one shard");
  const out: RuleStats = { ...first, skippedPatterns: [...first.skippedPatterns] };
  for (const s of rest) {
    for (const key of Object.keys(out) as (keyof RuleStats)[]) {
      const value = s[key];
      if (typeof value === "number" && key !== "patternBudget") (out[key] as number) += value;
    }
    out.skippedPatterns.push(...s.skippedPatterns);
    out.dense &&= s.dense;
  }
  return out;
}
