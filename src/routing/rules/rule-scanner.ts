/**
 * The per-route half of the rule tier: one scan of the input through the automaton, boundary
 * checks on keyword hits, the regexes whose factors occurred, then scores and sorting.
 *
 * Scratch state (stamps, counters, candidate lists) is allocated once per compiled registry and
 * reused. A route never awaits and calls no user code, so reuse within one isolate is safe.
 * Stamps carry a generation number, so nothing has to be cleared between routes.
 *
 * Inputs that are pure ASCII (most of them) take one pass: NFKC is the identity there and the
 * automaton's class map does the lower-casing. Other inputs take two: the raw input for pattern
 * factors (which are ASCII and must be looked for in what the regex sees) and its NFKC,
 * lower-cased form for keywords.
 */
import type { RuleMatch } from "../types";
import { sparseNext, type Automaton } from "./automaton";
import { boundaryAfter, boundaryBefore, foldText, WHITESPACE } from "./text";

/** Everything the scanner reads, built by `compileRules`; agent and pattern ids are indexes. */
export interface RuleTables {
  automaton: Automaton;
  /** Per entry: bit 1 = needs a word boundary before, bit 2 = after (keyword role only). */
  entryBoundary: Uint8Array;
  keywordRefStart: Int32Array;
  keywordRefAgent: Int32Array;
  factorRefStart: Int32Array;
  factorRefPattern: Int32Array;
  names: string[];
  priorities: Int32Array;
  keywordStart: Int32Array;
  keywordEntry: Int32Array;
  keywordText: string[];
  patternStart: Int32Array;
  patternAgent: Int32Array;
  patternSource: string[];
  patternRegex: RegExp[];
  alwaysRun: Int32Array;
}

const KEYWORDS = 1;
const FACTORS = 2;

/** Scans inputs against one compiled registry. */
export class RuleScanner {
  private generation = 0;
  private readonly keywordStamp: Uint32Array;
  private readonly factorStamp: Uint32Array;
  private readonly candidateStamp: Uint32Array;
  private readonly patternHit: Uint32Array;
  private readonly agentStamp: Uint32Array;
  private readonly keywordCount: Int32Array;
  private readonly patternCount: Int32Array;
  private readonly touched: Int32Array;
  private touchedCount = 0;
  private readonly candidates: Int32Array;
  private candidateCount = 0;
  private readonly scores: Float64Array;
  private positions = new Int32Array(256);
  private readonly hasFactors: boolean;

  constructor(private readonly t: RuleTables) {
    const entries = t.entryBoundary.length;
    const agents = t.names.length;
    const patterns = t.patternSource.length;
    this.keywordStamp = new Uint32Array(entries);
    this.factorStamp = new Uint32Array(entries);
    this.candidateStamp = new Uint32Array(patterns);
    this.patternHit = new Uint32Array(patterns);
    this.candidates = new Int32Array(patterns);
    this.agentStamp = new Uint32Array(agents);
    this.keywordCount = new Int32Array(agents);
    this.patternCount = new Int32Array(agents);
    this.touched = new Int32Array(agents);
    this.scores = new Float64Array(agents);
    this.hasFactors = t.factorRefPattern.length > 0;
  }

  /** Bytes of per-route scratch held by this scanner. */
  get scratchBytes(): number {
    const arrays = [this.keywordStamp, this.factorStamp, this.candidateStamp, this.patternHit, this.agentStamp];
    const more = [this.keywordCount, this.patternCount, this.touched, this.scores, this.candidates, this.positions];
    return [...arrays, ...more].reduce((sum, a) => sum + a.byteLength, 0);
  }

  /** Agents with a score > 0, highest first, ties in registry order. */
  match(input: string): RuleMatch[] {
    this.startRoute();
    if (!this.scan(input, KEYWORDS | FACTORS, true)) {
      this.startRoute();
      if (this.hasFactors) this.scan(input, FACTORS, false);
      this.scan(foldText(input), KEYWORDS, false);
    }
    const { alwaysRun, patternRegex } = this.t;
    for (let k = 0; k < alwaysRun.length; k++) this.runPattern(alwaysRun[k]!, input, patternRegex);
    for (let k = 0; k < this.candidateCount; k++) this.runPattern(this.candidates[k]!, input, patternRegex);
    return this.results();
  }

  private startRoute(): void {
    if (this.generation === 0xffffffff) {
      for (const a of [this.keywordStamp, this.factorStamp, this.candidateStamp, this.patternHit, this.agentStamp]) a.fill(0);
      this.generation = 0;
    }
    this.generation++;
    this.touchedCount = 0;
    this.candidateCount = 0;
  }

  /**
   * One pass of `text` through the automaton; whitespace runs are fed as one space. Returns
   * false (and must be redone on the slow path) when `asciiOnly` and a non-ASCII unit is seen.
   */
  private scan(text: string, mode: number, asciiOnly: boolean): boolean {
    const a = this.t.automaton;
    const { dense, classOf, outFirst, classCount } = a;
    if (this.positions.length < text.length) this.positions = new Int32Array(Math.max(text.length, 2 * this.positions.length));
    const positions = this.positions;
    let state = 0;
    let v = -1;
    let previousSpace = false;
    for (let i = 0; i < text.length; i++) {
      const unit = text.charCodeAt(i);
      if (unit >= 128 && asciiOnly) return false;
      if (WHITESPACE[unit] === 1) {
        if (previousSpace) continue;
        previousSpace = true;
      } else previousSpace = false;
      positions[++v] = i;
      const cls = classOf[unit]!;
      state = dense !== null ? dense[state * classCount + cls]! : sparseNext(a, state, cls);
      if (outFirst[state]! >= 0) this.report(state, text, i, v, mode);
    }
    return true;
  }

  /** Every entry ending at `end` (raw index) / `v` (collapsed index) in state `state`. */
  private report(state: number, text: string, end: number, v: number, mode: number): void {
    const t = this.t;
    const { stateEntry, dictLink, entryLength } = t.automaton;
    const generation = this.generation;
    for (let s = t.automaton.outFirst[state]!; s >= 0; s = dictLink[s]!) {
      const entry = stateEntry[s]!;
      if ((mode & KEYWORDS) !== 0 && this.keywordStamp[entry] !== generation) {
        const from = t.keywordRefStart[entry]!;
        const to = t.keywordRefStart[entry + 1]!;
        const boundary = t.entryBoundary[entry]!;
        if (
          from < to &&
          ((boundary & 1) === 0 || boundaryBefore(text, this.positions[v - entryLength[entry]! + 1]!)) &&
          ((boundary & 2) === 0 || boundaryAfter(text, end))
        ) {
          this.keywordStamp[entry] = generation;
          for (let r = from; r < to; r++) this.keywordCount[this.touch(t.keywordRefAgent[r]!)]!++;
        }
      }
      if ((mode & FACTORS) !== 0 && this.factorStamp[entry] !== generation) {
        this.factorStamp[entry] = generation;
        for (let r = t.factorRefStart[entry]!; r < t.factorRefStart[entry + 1]!; r++) {
          const pattern = t.factorRefPattern[r]!;
          if (this.candidateStamp[pattern] !== generation) {
            this.candidateStamp[pattern] = generation;
            this.candidates[this.candidateCount++] = pattern;
          }
        }
      }
    }
  }

  private touch(agent: number): number {
    if (this.agentStamp[agent] !== this.generation) {
      this.agentStamp[agent] = this.generation;
      this.keywordCount[agent] = 0;
      this.patternCount[agent] = 0;
      this.touched[this.touchedCount++] = agent;
    }
    return agent;
  }

  private runPattern(pattern: number, input: string, regexes: RegExp[]): void {
    if (regexes[pattern]!.test(input)) {
      this.patternHit[pattern] = this.generation;
      this.patternCount[this.touch(this.t.patternAgent[pattern]!)]!++;
    }
  }

  private results(): RuleMatch[] {
    const t = this.t;
    const order: number[] = [];
    for (let k = 0; k < this.touchedCount; k++) {
      const agent = this.touched[k]!;
      const raw = 10 * this.keywordCount[agent]! + 20 * this.patternCount[agent]!;
      // The seed's exact expression (not raw × priority / 100), so halves round as they did there.
      const score = Math.round(raw * (t.priorities[agent]! / 100));
      if (score > 0) {
        this.scores[agent] = score;
        order.push(agent);
      }
    }
    const scores = this.scores;
    order.sort((x, y) => scores[y]! - scores[x]! || x - y);
    const generation = this.generation;
    return order.map((agent) => {
      const matchedKeywords: string[] = [];
      for (let k = t.keywordStart[agent]!; k < t.keywordStart[agent + 1]!; k++) {
        if (this.keywordStamp[t.keywordEntry[k]!] === generation) matchedKeywords.push(t.keywordText[k]!);
      }
      const matchedPatterns: string[] = [];
      for (let p = t.patternStart[agent]!; p < t.patternStart[agent + 1]!; p++) {
        if (this.patternHit[p] === generation) matchedPatterns.push(t.patternSource[p]!);
      }
      return { agent: t.names[agent]!, score: scores[agent]!, matched_keywords: matchedKeywords, matched_patterns: matchedPatterns };
    });
  }
}
