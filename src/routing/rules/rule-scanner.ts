/**
 * The per-route half of the rule tier: one scan of the input through the automaton, boundary
 * checks on keyword hits, the patterns whose factors occurred, then scores and sorting.
 *
 * Scratch state (stamps, counters, candidate lists) is allocated once per compiled registry and
 * reused. A route never awaits and calls no user code, so reuse within one isolate is safe.
 * Stamps carry a generation number, so nothing has to be cleared between routes.
 *
 * Inputs that are pure ASCII (most of them) take one pass: NFKC is the identity there and the
 * automaton's class map does the lower-casing. Other inputs take two: the raw input for pattern
 * factors (which are ASCII and must be looked for in what the patterns see) and its NFKC,
 * lower-cased form for keywords.
 */
import type { RuleMatch } from "../types";
import type { Automaton } from "./automaton";
import { deepNext, KELVIN, SPACE_CLASS, stateOfCode } from "./automaton";
import { PATTERN_PREFIX } from "./pattern-budget";
import { programCharge } from "./pattern-cost";
import { type SearchState, searchFrom, searchSlice, type VerifierTables, verifyAt } from "./pattern-verifier";
import { boundaryAfter, boundaryBefore, foldText, isRegexWordUnit, WHITESPACE } from "./text";
import { sortRange } from "./typed-sort";

/** Everything the scanner reads, built by `compileRules`; agent and pattern ids are indexes. */
export interface RuleTables {
  automaton: Automaton;
  /** Per entry: bit 1 = needs a word boundary before, bit 2 = after (keyword role only). */
  entryBoundary: Uint8Array;
  keywordRefStart: Int32Array;
  /** Per entry: keyword slots, i.e. indexes into `keywordAgent`/`keywordText` (agent order, then definition order). */
  keywordRefSlot: Int32Array;
  factorRefStart: Int32Array;
  /** Per entry, grouped: anchored patterns (tried where the factor occurs), then unanchored ones. */
  factorRefPattern: Int32Array;
  /** Per entry: how many of its patterns come first as anchored. */
  factorAnchored: Int32Array;
  /** Per pattern: index of the set (129 entries in `nextSets`) the unit after its factor must be in, or −1. */
  patternNext: Int32Array;
  /** Per pattern: 1 when a word boundary must hold where its factor starts. */
  patternBoundary: Uint8Array;
  nextSets: Uint8Array;
  /** Per pattern: offset of its program in `verifier.code`. */
  patternVerifier: Int32Array;
  /** Per pattern: instruction to resume at right after its (single) factor, or 0 to run from the start. */
  patternResume: Int32Array;
  verifier: VerifierTables;
  names: string[];
  priorities: Int32Array;
  keywordAgent: Int32Array;
  keywordText: string[];
  patternStart: Int32Array;
  patternAgent: Int32Array;
  patternSource: string[];
  alwaysRun: Int32Array;
}

/** Registry sizes below 2²⁴ agents fit the packed sort key next to any score. */
export const AGENT_SPAN = 2 ** 24;
const KEYWORDS = 1;
const FACTORS = 2;
/**
 * Tries of one anchored pattern at its factor's occurrences per route; past them it is
 * searched once over the input instead. Each try may read to the end of the input, so
 * without this bound an input repeating the factor would cost quadratic time.
 */
const MAX_ANCHORED_TRIES = 4;

/** Scans inputs against one compiled registry. */
export class RuleScanner {
  private generation = 0;
  private readonly keywordStamp: Uint32Array;
  private readonly factorStamp: Uint32Array;
  private readonly candidateStamp: Uint32Array;
  /** Per pattern: counted in this route's bound (matchIfLight). */
  private readonly boundStamp: Uint32Array;
  private readonly patternHit: Uint32Array;
  /**
   * Per agent, one 16-byte record (one cache line holds four agents): [stamp, keyword hits,
   * pattern hits, place in the result list + 1]. Valid only where stamp is this route's.
   */
  private readonly agentState: Uint32Array;
  private readonly touched: Int32Array;
  private touchedCount = 0;
  private readonly candidates: Int32Array;
  private candidateCount = 0;
  private readonly sortKeys: Float64Array;
  /** Per pattern: [route stamp, tries at factor occurrences in that route]. */
  private readonly tries: Uint32Array;
  private occurrenceEntry = new Int32Array(64);
  private occurrenceStart = new Int32Array(64);
  private occurrenceCount = 0;
  /** Keyword slots and pattern ids that matched in this route (each at most once). */
  private matchedSlots = new Int32Array(64);
  private slotCount = 0;
  private readonly matchedPatterns: Int32Array;
  private matchedPatternCount = 0;

  private positions = new Int32Array(256);
  private readonly hasFactors: boolean;
  /** Each pattern's charge (pattern-cost.ts): its work per code unit, in ASCII literal steps. */
  private readonly patternSize: Int32Array;
  /** Where the pattern work of this route stands: phase (factor hits, always-run, queued), next item, end. */
  private phase = 0;
  private next = 0;
  private end = 0;
  /** Instruction steps' bound of the pattern work done since `runPatterns` was called. */
  private work = 0;
  /** In turns: every factor hit queues its patterns for a search, and searches go in pieces. */
  private sliced = false;
  private pending: { pattern: number; state: SearchState } | null = null;

  constructor(private readonly t: RuleTables) {
    const entries = t.entryBoundary.length;
    const agents = t.names.length;
    const patterns = t.patternSource.length;
    this.keywordStamp = new Uint32Array(entries);
    this.factorStamp = new Uint32Array(entries);
    this.candidateStamp = new Uint32Array(patterns);
    this.boundStamp = new Uint32Array(patterns);
    this.tries = new Uint32Array(2 * patterns);
    this.patternHit = new Uint32Array(patterns);
    this.candidates = new Int32Array(patterns);
    this.matchedPatterns = new Int32Array(patterns);
    this.agentState = new Uint32Array(4 * agents);
    this.touched = new Int32Array(agents);
    this.sortKeys = new Float64Array(agents);
    this.hasFactors = t.factorRefPattern.length > 0;
    this.patternSize = new Int32Array(patterns);
    for (let p = 0; p < patterns; p++) {
      const to = p + 1 < patterns ? t.patternVerifier[p + 1]! : t.verifier.code.length;
      this.patternSize[p] = programCharge(t.verifier.code, t.patternVerifier[p]!, to).charge;
    }
  }

  /** Bytes of per-route scratch held by this scanner. */
  get scratchBytes(): number {
    const arrays: ArrayBufferView[] = [
      this.keywordStamp,
      this.factorStamp,
      this.candidateStamp,
      this.patternHit,
      this.agentState,
      this.tries,
    ];
    arrays.push(this.touched, this.sortKeys, this.candidates, this.positions);
    arrays.push(this.occurrenceEntry, this.occurrenceStart, this.matchedSlots, this.matchedPatterns);
    return arrays.reduce((sum, a) => sum + a.byteLength, 0);
  }

  /** Agents with a score > 0, highest first, ties in registry order; only the first `limit` of them. */
  match(input: string, limit: number): RuleMatch[] {
    this.begin(input);
    this.runPatterns(input, Number.POSITIVE_INFINITY);
    return this.results(limit);
  }

  /**
   * `match` when this input's pattern work is bounded by `slice` charged steps once the
   * scan has shown which patterns it needs (always-run ones, and those whose factor occurred
   * within the prefix); null when it could be more, for `matchInTurns` on a scanner of its own.
   */
  matchIfLight(input: string, limit: number, slice: number): RuleMatch[] | null {
    this.begin(input);
    const t = this.t;
    const end = this.end;
    const lengths = t.automaton.entryLength;
    let bound = 0;
    for (let k = 0; k < t.alwaysRun.length; k++) bound += this.patternSize[t.alwaysRun[k]!]!;
    for (let k = 0; k < this.occurrenceCount && bound * end <= slice; k++) {
      const entry = this.occurrenceEntry[k]!;
      if (this.occurrenceStart[k]! + lengths[entry]! > end) continue;
      for (let r = t.factorRefStart[entry]!; r < t.factorRefStart[entry + 1]!; r++) {
        const pattern = t.factorRefPattern[r]!;
        if (this.boundStamp[pattern] === this.generation) continue;
        this.boundStamp[pattern] = this.generation;
        // An anchored pattern may be tried at up to MAX_ANCHORED_TRIES occurrences, then searched.
        bound +=
          this.patternSize[pattern]! *
          (r < t.factorRefStart[entry]! + t.factorAnchored[entry]! ? MAX_ANCHORED_TRIES + 1 : 1);
      }
    }
    if (bound * end > slice) return null;
    this.runPatterns(input, Number.POSITIVE_INFINITY);
    return this.results(limit);
  }

  /**
   * `match`, with the pattern work cut into slices of about `slice` charged steps and
   * `turn()` awaited between them (lane.ts), so other requests run in between. The scanner's
   * scratch lives across the awaits: the caller gives this route a scanner of its own.
   */
  async matchInTurns(input: string, limit: number, turn: () => Promise<void>, slice: number): Promise<RuleMatch[]> {
    this.begin(input);
    this.sliced = true;
    await turn();
    while (!this.runPatterns(input, slice)) await turn();
    return this.results(limit);
  }

  /** The scans: keyword hits counted, factor occurrences listed; the patterns wait for `runPatterns`. */
  private begin(input: string): void {
    this.startRoute();
    if (!this.scan(input, KEYWORDS | FACTORS, true)) {
      this.startRoute();
      if (this.hasFactors) this.scan(input, FACTORS, false);
      this.scan(foldText(input), KEYWORDS, false);
    }
    // Patterns read the input's first PATTERN_PREFIX code units only (pattern-budget.ts).
    this.end = Math.min(input.length, PATTERN_PREFIX);
    this.phase = 0;
    this.next = 0;
    this.sliced = false;
    this.pending = null;
  }

  /**
   * Runs the patterns this route needs, from where the last call stopped, until about `budget`
   * charged steps are done (a pattern is never cut). True when all have run.
   */
  private runPatterns(input: string, budget: number): boolean {
    this.work = 0;
    const end = this.end;
    if (this.phase === 0) {
      const lengths = this.t.automaton.entryLength;
      while (this.next < this.occurrenceCount) {
        const k = this.next++;
        const entry = this.occurrenceEntry[k]!;
        const start = this.occurrenceStart[k]!;
        if (start + lengths[entry]! <= end) this.factorHit(entry, input, start, end);
        if (this.work >= budget) return false;
      }
      this.phase = 1;
      this.next = 0;
    }
    if (this.sliced) return this.runSlices(input, budget);
    if (this.phase === 1) {
      const { alwaysRun } = this.t;
      while (this.next < alwaysRun.length) {
        this.runPattern(alwaysRun[this.next++]!, input, end);
        if (this.work >= budget) return false;
      }
      this.phase = 2;
      this.next = 0;
    }
    while (this.next < this.candidateCount) {
      this.runPattern(this.candidates[this.next++]!, input, end);
      if (this.work >= budget) return false;
    }
    return true;
  }

  /**
   * The always-run and queued patterns of a route in turns: each searched in pieces of at most
   * `budget` charged steps (a search cut short goes on at the next call).
   */
  private runSlices(input: string, budget: number): boolean {
    const t = this.t;
    const always = t.alwaysRun.length;
    for (;;) {
      const k = this.next;
      if (k >= always + this.candidateCount) return true;
      const pattern = k < always ? t.alwaysRun[k]! : this.candidates[k - always]!;
      if (this.patternHit[pattern] === this.generation) {
        this.next++;
        continue;
      }
      const size = this.patternSize[pattern]!;
      const positions = Math.max(1, Math.floor((budget - this.work) / size));
      const state = this.pending?.pattern === pattern ? this.pending.state : null;
      const found = searchSlice(t.verifier, t.patternVerifier[pattern]!, input, state, this.end, positions);
      if (typeof found === "object") {
        this.pending = { pattern, state: found };
        return false;
      }
      this.work += size * (this.end - (state?.pos ?? 0));
      this.pending = null;
      this.next++;
      if (found) this.recordHit(pattern);
      if (this.work >= budget) return false;
    }
  }

  private startRoute(): void {
    if (this.generation === 0xffffffff) {
      for (const a of [
        this.keywordStamp,
        this.factorStamp,
        this.candidateStamp,
        this.boundStamp,
        this.patternHit,
        this.agentState,
        this.tries,
      ])
        a.fill(0);
      this.generation = 0;
    }
    this.generation++;
    this.touchedCount = 0;
    this.candidateCount = 0;
    this.occurrenceCount = 0;
    this.slotCount = 0;
    this.matchedPatternCount = 0;
  }

  /**
   * One pass of `text` through the automaton; whitespace runs are fed as one space. Returns
   * false (and must be redone on the slow path) when `asciiOnly` and a non-ASCII unit is seen.
   */
  private scan(text: string, mode: number, asciiOnly: boolean): boolean {
    const a = this.t.automaton;
    const { dense, classOf, kelvinClass } = a;
    const denseEnd = a.denseStates * a.classCount;
    if (this.positions.length < text.length)
      this.positions = new Int32Array(Math.max(text.length, 2 * this.positions.length));
    const positions = this.positions;
    let code = 0;
    let v = -1;
    let previousSpace = false;
    for (let i = 0; i < text.length; i++) {
      const unit = text.charCodeAt(i);
      if (unit >= 128 && asciiOnly) return false;
      const cls =
        unit < classOf.length
          ? classOf[unit]!
          : unit === KELVIN
            ? kelvinClass
            : WHITESPACE[unit] === 1
              ? SPACE_CLASS
              : 0;
      if (cls === SPACE_CLASS) {
        if (previousSpace) continue;
        previousSpace = true;
      } else previousSpace = false;
      positions[++v] = i;
      let next = code < denseEnd ? dense[code + cls]! : deepNext(a, code, cls);
      if (next < 0) {
        next = ~next;
        this.report(stateOfCode(a, next), text, i, v, mode);
      }
      code = next;
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
          for (let r = from; r < to; r++) {
            const slot = t.keywordRefSlot[r]!;
            this.agentState[this.touch(t.keywordAgent[slot]!) + 1]!++;
            if (this.slotCount === this.matchedSlots.length) this.matchedSlots = grow(this.matchedSlots);
            this.matchedSlots[this.slotCount++] = slot;
          }
        }
      }
      if ((mode & FACTORS) !== 0 && t.factorRefStart[entry]! < t.factorRefStart[entry + 1]!) {
        // Regexes run after the scan, so they do not evict the automaton from the cache mid-pass.
        if (this.occurrenceCount === this.occurrenceEntry.length) this.growOccurrences();
        this.occurrenceEntry[this.occurrenceCount] = entry;
        this.occurrenceStart[this.occurrenceCount++] = end - entryLength[entry]! + 1;
      }
    }
  }

  /**
   * A factor occurred at raw index `start` of the input (factors hold no whitespace, so their
   * span is not collapsed). Anchored patterns are tried right there after two cheap checks (at
   * most MAX_ANCHORED_TRIES times a route, then queued for one search); the others are queued
   * to run once over the whole input.
   */
  private factorHit(entry: number, text: string, start: number, end: number): void {
    const t = this.t;
    const generation = this.generation;
    const from = t.factorRefStart[entry]!;
    const to = t.factorRefStart[entry + 1]!;
    if (from === to) return;
    // In turns, anchored patterns are searched like the others (a try could not be cut).
    const anchoredEnd = this.sliced ? from : from + t.factorAnchored[entry]!;
    if (from < anchoredEnd) {
      // Cheap checks first: the unit after the factor, and a leading \b, decide most tries.
      const after = start + t.automaton.entryLength[entry]!;
      const nextUnit = after < text.length ? text.charCodeAt(after) : -1;
      const nextIndex = Math.min(nextUnit, 128);
      const boundary =
        isRegexWordUnit(start > 0 ? text.charCodeAt(start - 1) : -1) !== isRegexWordUnit(text.charCodeAt(start));
      for (let r = from; r < anchoredEnd; r++) {
        const pattern = t.factorRefPattern[r]!;
        if (!this.worthTrying(pattern, nextIndex, boundary)) continue;
        if (!this.mayTry(pattern)) {
          this.queue(pattern);
          continue;
        }
        const resume = t.patternResume[pattern]!;
        const at = resume === 0 ? start : after;
        this.work += this.patternSize[pattern]! * (end - at);
        if (verifyAt(t.verifier, t.patternVerifier[pattern]!, text, at, resume, end)) this.recordHit(pattern);
      }
    }
    if (this.factorStamp[entry] === generation) return;
    this.factorStamp[entry] = generation;
    for (let r = anchoredEnd; r < to; r++) this.queue(t.factorRefPattern[r]!);
  }

  /** Counts a try of an anchored pattern in this route; false once it has had its share. */
  private mayTry(pattern: number): boolean {
    const at = 2 * pattern;
    if (this.tries[at] !== this.generation) {
      this.tries[at] = this.generation;
      this.tries[at + 1] = 0;
    }
    return ++this.tries[at + 1]! <= MAX_ANCHORED_TRIES;
  }

  /** Queues a pattern for one search over the whole input (once a route). */
  private queue(pattern: number): void {
    if (this.candidateStamp[pattern] !== this.generation) {
      this.candidateStamp[pattern] = this.generation;
      this.candidates[this.candidateCount++] = pattern;
    }
  }

  private growOccurrences(): void {
    this.occurrenceEntry = grow(this.occurrenceEntry);
    this.occurrenceStart = grow(this.occurrenceStart);
  }

  /** Not matched yet in this route, and the unit after the factor and a leading \b allow a match. */
  private worthTrying(pattern: number, nextIndex: number, boundary: boolean): boolean {
    const t = this.t;
    if (this.patternHit[pattern] === this.generation) return false;
    const set = t.patternNext[pattern]!;
    if (set >= 0 && (nextIndex < 0 || t.nextSets[set * 129 + nextIndex] === 0)) return false;
    return t.patternBoundary[pattern] === 0 || boundary;
  }

  /** Starts the agent's record for this route if needed; returns the record's offset. */
  private touch(agent: number): number {
    const at = 4 * agent;
    const state = this.agentState;
    if (state[at] !== this.generation) {
      state[at] = this.generation;
      state[at + 1] = 0;
      state[at + 2] = 0;
      state[at + 3] = 0;
      this.touched[this.touchedCount++] = agent;
    }
    return at;
  }

  private runPattern(pattern: number, input: string, end: number): void {
    this.work += this.patternSize[pattern]! * end;
    if (
      this.patternHit[pattern] !== this.generation &&
      searchFrom(this.t.verifier, this.t.patternVerifier[pattern]!, input, 0, end)
    )
      this.recordHit(pattern);
  }

  private recordHit(pattern: number): void {
    this.patternHit[pattern] = this.generation;
    this.matchedPatterns[this.matchedPatternCount++] = pattern;
    this.agentState[this.touch(this.t.patternAgent[pattern]!) + 2]!++;
  }

  private results(limit: number): RuleMatch[] {
    const t = this.t;
    // Sort keys pack score and registry order in one double (score · 2²⁴ + (2²⁴ − 1 − agent)), so a
    // numeric sort orders by score, then registry order; only the `limit` largest need ordering.
    const keys = this.sortKeys;
    let count = 0;
    for (let k = 0; k < this.touchedCount; k++) {
      const agent = this.touched[k]!;
      const raw = 10 * this.agentState[4 * agent + 1]! + 20 * this.agentState[4 * agent + 2]!;
      // This exact expression, not raw × priority / 100: the two round some halves apart (50 × 29 / 100
      // is 14.499… in floating point), and the documented score is this one (compile-rules.test.ts).
      const score = Math.round(raw * (t.priorities[agent]! / 100));
      if (score > 0) keys[count++] = score * AGENT_SPAN + (AGENT_SPAN - 1 - agent);
    }
    const returned = Math.min(count, limit);
    sortRange(keys, 0, count, count - returned);
    const out: RuleMatch[] = new Array(returned);
    for (let k = 0; k < returned; k++) {
      const key = keys[count - 1 - k]!;
      const agent = AGENT_SPAN - 1 - (key % AGENT_SPAN);
      this.agentState[4 * agent + 3] = k + 1;
      out[k] = {
        agent: t.names[agent]!,
        score: Math.floor(key / AGENT_SPAN),
        matched_keywords: [],
        matched_patterns: [],
      };
    }
    // Slots and pattern ids are numbered by agent, then definition order: those of returned
    // agents, sorted, fill each one's lists in definition order.
    const slots = this.matchedSlots;
    let kept = 0;
    for (let k = 0; k < this.slotCount; k++)
      if (this.agentState[4 * t.keywordAgent[slots[k]!]! + 3]! > 0) slots[kept++] = slots[k]!;
    sortRange(slots, 0, kept);
    for (let k = 0; k < kept; k++) {
      const place = this.agentState[4 * t.keywordAgent[slots[k]!]! + 3]!;
      out[place - 1]!.matched_keywords.push(t.keywordText[slots[k]!]!);
    }
    const patterns = this.matchedPatterns;
    kept = 0;
    for (let k = 0; k < this.matchedPatternCount; k++)
      if (this.agentState[4 * t.patternAgent[patterns[k]!]! + 3]! > 0) patterns[kept++] = patterns[k]!;
    sortRange(patterns, 0, kept);
    for (let k = 0; k < kept; k++) {
      const place = this.agentState[4 * t.patternAgent[patterns[k]!]! + 3]!;
      out[place - 1]!.matched_patterns.push(t.patternSource[patterns[k]!]!);
    }
    return out;
  }
}

function grow(array: Int32Array): Int32Array<ArrayBuffer> {
  const bigger = new Int32Array(2 * array.length);
  bigger.set(array);
  return bigger;
}
