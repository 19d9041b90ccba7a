/**
 * The compiled rule tier (docs/routing.md, The tiers): all keywords and pattern factors of all enabled agents in
 * one automaton, each pattern compiled once, so a route is one pass over the input plus the few
 * patterns whose factors occurred — whatever the number of agents. Every pattern runs on the
 * tier's own NFA (`pattern-verifier.ts`), in time linear in the input: a pattern whose matches
 * all start with a factor is tried where that factor occurs, the others once over the input.
 *
 * Scoring (docs/routing.md, The tiers): per agent, each distinct
 * keyword that occurs +10, each pattern that matches +20, then `Math.round(total × (priority/100))`
 * with that exact expression, whose rounding of halves the tests pin. Keywords match as described in
 * `text.ts` (case-insensitive, NFKC, whole-word in spaced scripts, substring in CJK/Thai).
 * Patterns run on the original input with the semantics of `new RegExp(p, 'iu')`
 * (case-insensitive, Unicode mode); patterns admission refuses (`pattern-safety.ts`) are skipped.
 */
import type { AgentDefinition } from "../../schemas/agent";
import type { CompiledRules, RuleMatch } from "../types";
import { buildAutomaton, DENSE_CELL_LIMIT, type PackedAutomaton, packAutomaton, unpackAutomaton } from "./automaton";
import { nextTurn, SLICE_STEPS } from "./lane";
import { type PatternFactors, requiredFactors } from "./literal-factors";
import { PATTERN_BUDGET, PATTERN_PREFIX } from "./pattern-budget";
import { type PatternCharge, programCharge } from "./pattern-cost";
import { admitPattern } from "./pattern-safety";
import { ClassTable, PredicateTable, relocateProgram, resumePoint, type VerifierTables } from "./pattern-verifier";
import { AGENT_SPAN, RuleScanner, type RuleTables } from "./rule-scanner";
import { endCodePoints, isSpacedWordChar, normalizeKeyword } from "./text";
import { type ClassSpec, predicateRegExps } from "./verifier-classes";

/** What was compiled, for `/v1/route/stats` and for the benchmark. */
export interface RuleStats {
  agents: number;
  keywords: number;
  patterns: number;
  /** Patterns that run only when one of their literal factors occurs. */
  prefilteredPatterns: number;
  /** Of those, patterns every match of which starts with a factor: tried where it occurs. */
  anchoredPatterns: number;
  /** Patterns with no extractable factor: they run on every input. */
  alwaysRunPatterns: number;
  /** Charge of the linked patterns (pattern-cost.ts: an ASCII literal instruction is one unit). */
  patternInstructions: number;
  /** The tenant's limit on it. */
  patternBudget: number;
  /** One-code-point classes the matcher tests as predicates (non-ASCII literals, `\p{…}`, …). */
  predicates: number;
  skippedPatterns: { agent: string; pattern: string; reason: string }[];
  /** Distinct strings in the automaton (keywords and factors share entries). */
  entries: number;
  states: number;
  classes: number;
  /** States with a full DFA row (the shallowest ones); the rest step through failure links. */
  denseStates: number;
  /** Every state has a dense row. */
  dense: boolean;
  /** Approximate bytes held by the compiled structures. */
  memoryBytes: number;
}

/** Compiled rules plus what they hold. */
export interface CompiledRuleSet extends CompiledRules {
  /**
   * Agents with a score > 0, highest first, ties in registry order. With `limit`, only the best
   * `limit` are built: a router that needs the top few skips building the long tail.
   */
  match(input: string, limit?: number): RuleMatch[];
  /**
   * `match` for a route that may wait: when this input's pattern work could pass SLICE_STEPS
   * (the charge of the patterns its scan calls for × the prefix it reads), it runs on a
   * scanner of its own in slices, awaiting `turn` between them (lane.ts); otherwise it is `match`.
   */
  matchInTurns(input: string, limit?: number, turn?: () => Promise<void>): Promise<RuleMatch[]>;
  readonly stats: RuleStats;
  /** Of stats.memoryBytes, the automaton's (its dense rows most of it). */
  readonly automatonBytes: number;
}

class EntryTable {
  readonly ids = new Map<string, number>();
  readonly strings: string[] = [];
  /** Per entry, the keyword slots (global index of an agent's keyword) it stands for. */
  readonly keywordSlots: number[][] = [];
  readonly factorPatterns: number[][] = [];

  idOf(text: string): number {
    let id = this.ids.get(text);
    if (id === undefined) {
      id = this.strings.length;
      this.ids.set(text, id);
      this.strings.push(text);
      this.keywordSlots.push([]);
      this.factorPatterns.push([]);
    }
    return id;
  }
}

/** A short key for a 129-entry 0/1 set, to share identical sets between patterns. */
function setKey(set: Uint8Array): string {
  const words = [0, 0, 0, 0, 0];
  for (let i = 0; i < set.length; i++) if (set[i] === 1) words[i >>> 5]! |= 1 << (i & 31);
  return words.join(",");
}

/** The interned sets, 129 entries each, in id order. */
function packSets(keys: Map<string, number>): Uint8Array {
  const packed = new Uint8Array(129 * keys.size);
  for (const [key, id] of keys) {
    const words = key.split(",").map(Number);
    for (let i = 0; i < 129; i++) packed[129 * id + i] = (words[i >>> 5]! >>> (i & 31)) & 1;
  }
  return packed;
}

function toCsr(lists: number[][]): { start: Int32Array; items: Int32Array } {
  const start = new Int32Array(lists.length + 1);
  for (const [i, list] of lists.entries()) start[i + 1] = start[i]! + list.length;
  const items = new Int32Array(start[lists.length]!);
  for (const [i, list] of lists.entries()) items.set(list, start[i]!);
  return { start, items };
}

/** Tuning knobs; the defaults are what production uses. */
export interface CompileOptions {
  /** Above this many DFA cells the automaton uses its sparse form (tests force it with 0). */
  denseCellLimit?: number;
  /** The tenant's pattern budget in charge units (tests pass smaller ones). */
  patternBudget?: number;
}

/** One admitted pattern of an agent, compiled against tables of its own. */
export interface PatternPart {
  source: string;
  /** Instruction triples; class and predicate ids index `classes` and `predicates`. */
  program: number[];
  classes: ClassSpec[];
  predicates: string[];
  factors: PatternFactors | null;
  /** Where the program resumes after its single anchored factor (0: from the start). */
  resume: number;
  /** What the pattern costs the budget: its charge (pattern-cost.ts) when it was compiled. */
  cost: number;
}

/**
 * A pattern's charge under the weights of this build: from its program, so a part kept from
 * before the weights changed is charged like a fresh one.
 */
export function patternCharge(pattern: PatternPart): PatternCharge {
  return programCharge(pattern.program);
}

/** What an agent's patterns cost the tenant's budget now: 0 when it is disabled (they never run). */
export function agentCharge(part: { enabled: boolean; rules: RulePart }): number {
  if (!part.enabled) return 0;
  let total = 0;
  for (const pattern of part.rules.patterns) total += patternCharge(pattern).charge;
  return total;
}

/**
 * One agent's rules compiled on their own: the unit a registry change recompiles. Linking
 * the parts of every enabled agent (`linkRules`) gives the registry's rule tier.
 */
export interface RulePart {
  name: string;
  priority: number;
  /** Distinct after normalisation, first spelling kept, in definition order. */
  keywords: { text: string; normalized: string }[];
  patterns: PatternPart[];
  skippedPatterns: { pattern: string; reason: string }[];
  /** Σ cost of the admitted patterns. */
  cost: number;
}

/** Compiles one agent's keywords and patterns (whether or not it is enabled). */
export function compileRulePart(agent: AgentDefinition): RulePart {
  const keywords: RulePart["keywords"] = [];
  const seenKeywords = new Set<string>();
  for (const keyword of agent.triggers.keywords) {
    const normalized = normalizeKeyword(keyword);
    if (normalized === "" || seenKeywords.has(normalized)) continue;
    seenKeywords.add(normalized);
    keywords.push({ text: keyword, normalized });
  }
  const patterns: PatternPart[] = [];
  const skippedPatterns: RulePart["skippedPatterns"] = [];
  let cost = 0;
  for (const source of new Set(agent.triggers.patterns)) {
    const classes = new ClassTable();
    const predicates = new PredicateTable();
    const admitted = admitPattern(source, { classes, predicates });
    if (!admitted.ok) {
      skippedPatterns.push({ pattern: source, reason: admitted.reason });
      continue;
    }
    const program = admitted.program;
    const factors = requiredFactors(source);
    const single = factors?.anchored === true && factors.factors.length === 1 ? factors.factors[0]! : null;
    const part: PatternPart = {
      source,
      program,
      classes: classes.specs,
      predicates: predicates.sources,
      factors,
      resume: single === null ? 0 : resumePoint(program, single, factors!.boundaryBefore),
      cost: programCharge(program).charge,
    };
    patterns.push(part);
    cost += part.cost;
  }
  return { name: agent.name, priority: agent.triggers.priority, keywords, patterns, skippedPatterns, cost };
}

/** What an agent's patterns cost the tenant's budget: 0 when it is disabled (its patterns never run). */
export function patternCost(agent: AgentDefinition): number {
  return agent.enabled ? compileRulePart(agent).cost : 0;
}

/**
 * Compiles the rule tier for a registry snapshot. Disabled agents are left out; registry order
 * (the order of `agents`) breaks ties between equal scores.
 */
export function compileRules(agents: readonly AgentDefinition[], options: CompileOptions = {}): CompiledRuleSet {
  return linkRules(agents.filter((a) => a.enabled).map(compileRulePart), options);
}

/**
 * Links the parts of the enabled agents, in registry order, into one rule tier: one automaton
 * for every keyword and factor, the patterns' programs in shared tables. Patterns past the
 * tenant's pattern budget (in registry order) are skipped, so the work of a route stays
 * bounded even for a registry admission never saw (see pattern-budget.ts).
 */
export function linkRules(parts: readonly RulePart[], options: CompileOptions = {}): CompiledRuleSet {
  return rulesFromImage(linkRuleImage(parts, options));
}

/** The linked rule tier as plain data (typed arrays, strings): what a stored router keeps. */
export interface RuleImage {
  tables: Omit<RuleTables, "verifier" | "automaton"> & {
    verifier: Omit<VerifierTables, "predicates">;
    automaton: PackedAutomaton;
  };
  predicateSources: string[];
  stats: Omit<RuleStats, "memoryBytes">;
  /** Bytes of the tables (the scanner's scratch is added when it is built). */
  tableBytes: number;
}

export function linkRuleImage(parts: readonly RulePart[], options: CompileOptions = {}): RuleImage {
  const budget = options.patternBudget ?? PATTERN_BUDGET;
  const entries = new EntryTable();
  const names: string[] = [];
  const priorities: number[] = [];
  const keywordAgent: number[] = [];
  const keywordText: string[] = [];
  const patternStart: number[] = [0];
  const patternAgent: number[] = [];
  const patternSource: string[] = [];
  const patternAnchored: boolean[] = [];
  const patternVerifier: number[] = [];
  const patternResume: number[] = [];
  const verifierCode: number[] = [];
  const classes = new ClassTable();
  const predicates = new PredicateTable();
  const patternNext: number[] = [];
  const patternBoundary: number[] = [];
  const nextSets = new Map<string, number>();
  const alwaysRun: number[] = [];
  const skippedPatterns: RuleStats["skippedPatterns"] = [];
  let stringBytes = 0;
  let instructions = 0;

  if (parts.length >= AGENT_SPAN) throw new RangeError(`at most ${AGENT_SPAN - 1} agents can be compiled`);
  for (const part of parts) {
    const index = names.length;
    names.push(part.name);
    priorities.push(part.priority);
    for (const { text, normalized } of part.keywords) {
      const entry = entries.idOf(normalized);
      entries.keywordSlots[entry]!.push(keywordText.length);
      keywordAgent.push(index);
      keywordText.push(text);
      stringBytes += 2 * (text.length + normalized.length);
    }
    for (const skipped of part.skippedPatterns) skippedPatterns.push({ agent: part.name, ...skipped });
    for (const pattern of part.patterns) {
      const charge = patternCharge(pattern).charge;
      if (instructions + charge > budget) {
        skippedPatterns.push({
          agent: part.name,
          pattern: pattern.source,
          reason: `is past the tenant's pattern budget of ${budget} (charged in ASCII literal steps)`,
        });
        continue;
      }
      instructions += charge;
      const { source, factors } = pattern;
      const id = patternSource.length;
      patternAgent.push(index);
      patternSource.push(source);
      stringBytes += 2 * source.length;
      const anchored = factors?.anchored === true;
      patternAnchored.push(anchored);
      patternVerifier.push(verifierCode.length);
      patternResume.push(pattern.resume);
      const classIds = pattern.classes.map((c) => classes.intern(c.members, c.spaces, c.negated));
      const predicateIds = pattern.predicates.map((p) => predicates.intern(p));
      for (const word of relocateProgram(pattern.program, classIds, predicateIds)) verifierCode.push(word);
      patternBoundary.push(factors?.boundaryBefore ? 1 : 0);
      const next = factors?.next ? setKey(factors.next) : null;
      if (next !== null && !nextSets.has(next)) nextSets.set(next, nextSets.size);
      patternNext.push(next === null ? -1 : nextSets.get(next)!);
      if (factors === null) alwaysRun.push(id);
      else for (const factor of factors.factors) entries.factorPatterns[entries.idOf(factor)]!.push(id);
    }
    patternStart.push(patternSource.length);
  }

  const automaton = buildAutomaton(entries.strings, options.denseCellLimit ?? DENSE_CELL_LIMIT);
  const keywordRefs = toCsr(entries.keywordSlots);
  // Per entry: the anchored patterns, tried where the factor occurs, then the unanchored
  // ones, queued for one search over the whole input.
  const factorAnchored = new Int32Array(entries.strings.length);
  const ordered = entries.factorPatterns.map((refs, entry) => {
    const anchored = refs.filter((p) => patternAnchored[p]);
    factorAnchored[entry] = anchored.length;
    return [...anchored, ...refs.filter((p) => !patternAnchored[p])];
  });
  const factorRefs = toCsr(ordered);
  const entryBoundary = new Uint8Array(entries.strings.length);
  entries.strings.forEach((text, entry) => {
    const [first, last] = endCodePoints(text);
    entryBoundary[entry] = (isSpacedWordChar(first) ? 1 : 0) | (isSpacedWordChar(last) ? 2 : 0);
  });

  const tables: RuleImage["tables"] = {
    automaton: packAutomaton(automaton),
    entryBoundary,
    keywordRefStart: keywordRefs.start,
    keywordRefSlot: keywordRefs.items,
    factorRefStart: factorRefs.start,
    factorRefPattern: factorRefs.items,
    factorAnchored,
    patternNext: Int32Array.from(patternNext),
    patternVerifier: Int32Array.from(patternVerifier),
    patternResume: Int32Array.from(patternResume),
    verifier: { code: Int32Array.from(verifierCode), classes: classes.toArray() },
    patternBoundary: Uint8Array.from(patternBoundary),
    nextSets: packSets(nextSets),
    names,
    priorities: Int32Array.from(priorities),
    keywordAgent: Int32Array.from(keywordAgent),
    keywordText,
    patternStart: Int32Array.from(patternStart),
    patternAgent: Int32Array.from(patternAgent),
    patternSource,
    alwaysRun: Int32Array.from(alwaysRun),
  };
  const typedBytes = [entryBoundary, keywordRefs.start, keywordRefs.items, factorRefs.start, factorRefs.items].reduce(
    (sum, a) => sum + a.byteLength,
    0,
  );
  return {
    tables,
    predicateSources: predicates.sources,
    tableBytes:
      linkedAutomatonBytes(tables.automaton) +
      typedBytes +
      stringBytes +
      4 * verifierCode.length +
      32 * keywordText.length,
    stats: {
      agents: names.length,
      keywords: keywordText.length,
      patterns: patternSource.length,
      prefilteredPatterns: patternSource.length - alwaysRun.length,
      anchoredPatterns: patternAnchored.filter(Boolean).length,
      alwaysRunPatterns: alwaysRun.length,
      patternInstructions: instructions,
      patternBudget: budget,
      predicates: predicates.size,
      skippedPatterns,
      entries: entries.strings.length,
      states: automaton.stateCount,
      classes: automaton.classCount,
      denseStates: automaton.denseStates,
      dense: automaton.denseStates === automaton.stateCount,
    },
  };
}

/**
 * What `tableBytes` counts for the automaton, as links have always counted it (stored images
 * keep the figure): a full Uint16 class map, every dense row, and the per-state and per-entry
 * arrays in 32 bits, child targets included (an unpacked automaton no longer holds them).
 */
function linkedAutomatonBytes(p: PackedAutomaton): number {
  const states = p.stateCount;
  return 2 * 65536 + 4 * p.classCount * p.denseStates + 4 * 6 * states + 2 * (states - 1) + 4 * p.entryLength.length;
}

/**
 * The rule tier from its image: the automaton's rows, the predicates' regexes and the scanner's
 * scratch are all it builds. `sparse`: build the root's row only (the rest step through
 * failure links), for a router that serves a few short inputs (docs/scaling.md).
 */
export function rulesFromImage(image: RuleImage, options: { sparse?: boolean } = {}): CompiledRuleSet {
  const packed = image.tables.automaton;
  const automaton = unpackAutomaton(packed, options.sparse === true ? 1 : undefined);
  const tables: RuleTables = {
    ...image.tables,
    automaton,
    verifier: { ...image.tables.verifier, predicates: predicateRegExps(image.predicateSources) },
  };
  const scanner = new RuleScanner(tables);
  // The link counted its own automaton: this one's instead.
  const memoryBytes = image.tableBytes - linkedAutomatonBytes(packed) + automaton.memoryBytes + scanner.scratchBytes;
  const stats: RuleStats = { ...image.stats, memoryBytes };
  const instructions = image.stats.patternInstructions;
  return {
    stats,
    automatonBytes: automaton.memoryBytes,
    match: (input: string, limit = Number.POSITIVE_INFINITY): RuleMatch[] => scanner.match(input, limit),
    matchInTurns: async (input, limit = Number.POSITIVE_INFINITY, turn = nextTurn) => {
      if (instructions * Math.min(input.length, PATTERN_PREFIX) <= SLICE_STEPS) return scanner.match(input, limit);
      return (
        scanner.matchIfLight(input, limit, SLICE_STEPS) ??
        new RuleScanner(tables).matchInTurns(input, limit, turn, SLICE_STEPS)
      );
    },
  };
}
