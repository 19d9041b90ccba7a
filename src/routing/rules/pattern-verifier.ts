/**
 * The rule tier's regex engine: every trigger pattern runs here, as a Thompson NFA simulated
 * over sets of states (Pike's method), so a match costs at most (input length × program size)
 * steps whatever the pattern and the input — no backtracking, so no catastrophic cases. Pattern
 * admission (`pattern-safety.ts`) accepts only what this engine runs.
 *
 * Two entry points: {@link verifyAt} (does a match start exactly here — the prefilter's check
 * where a pattern's literal factor occurred) and {@link searchFrom} (does a match start anywhere
 * from here on — `RegExp.prototype.test`). Only the question "is there a match" is answered,
 * which does not depend on greedy or lazy order.
 *
 * Semantics are those of flags `iu`: input read by code point; ASCII literals and classes from
 * shared typed arrays, case-folded (an ASCII letter equals its other case and, for `s`/`k`,
 * `ſ`/`K`); anything else one code point wide — a non-ASCII literal, `\p{…}`, `\x`/`\u`/`\c`
 * escapes, a bracket holding more than ASCII — is a predicate: a V8 regex of that one class,
 * anchored at both ends, tested on one code point (constant time, nothing to backtrack into).
 * `.` excludes line terminators; `^ $` are the input's ends; `\b \B` as `iu` defines them.
 */
import { type AssertKind, parseRegex, type RegexAst, type RegexNode } from "./regex-ast";
import { isRegexWordUnit, WHITESPACE } from "./text";
import { CLASS_ROW, type ClassTable, type PredicateTable } from "./verifier-classes";

export { ClassTable, PredicateTable } from "./verifier-classes";

// Consuming ops first, then control flow, then the zero-width assertions (`>= Begin`); the
// work budget charges each by its kind (pattern-cost.ts).
export enum Op {
  Char = 0,
  Class = 1,
  Any = 2,
  Predicate = 3,
  Split = 4,
  Jump = 5,
  Begin = 6,
  End = 7,
  WordBoundary = 8,
  NotWordBoundary = 9,
  Match = 10,
}

/**
 * Instructions per pattern at most: counted repetition is expanded, and the work per input
 * character is bounded by the program's size, so this bounds both memory and time.
 */
export const MAX_INSTRUCTIONS = 1000;
// A local copy: the hot path reads it on every class test.
const CLASS_WIDTH = CLASS_ROW;

class Unsupported extends Error {}

const ASSERT_OPS: Record<AssertKind, Op> = {
  "^": Op.Begin,
  $: Op.End,
  "\\b": Op.WordBoundary,
  "\\B": Op.NotWordBoundary,
};

/** The `u`-mode source of one code point, for a predicate. */
const codePointSource = (code: number): string => `\\u{${code.toString(16)}}`;

/**
 * Interns the tree's classes and predicates in source order, refusing at the first node this
 * engine does not run (lookaround, backreferences, inline modifiers: admission names them).
 */
function intern(
  alts: RegexAst,
  tables: { classes: ClassTable; predicates: PredicateTable },
  ids: Map<RegexNode, number>,
): void {
  for (const seq of alts) {
    for (const node of seq) {
      if (node.type === "char" && node.code >= 0x80)
        ids.set(node, tables.predicates.intern(codePointSource(node.code)));
      if (node.type === "class") {
        ids.set(
          node,
          node.set === null
            ? tables.predicates.intern(node.source)
            : tables.classes.intern(node.set.members, node.set.spaces, node.set.negated),
        );
      }
      if (node.type === "group") {
        if (node.modifiers !== undefined) throw new Unsupported();
        intern(node.alts, tables, ids);
      }
      if (node.type === "lookaround" || node.type === "backref") throw new Unsupported();
    }
  }
}

/** Thompson construction into [op, a, b] triples. */
class Emitter {
  readonly code: number[] = [];
  constructor(private readonly ids: Map<RegexNode, number>) {}

  private emit(op: Op, a = 0, b = 0): number {
    if (this.code.length / 3 >= MAX_INSTRUCTIONS) throw new Unsupported();
    this.code.push(op, a, b);
    return this.code.length / 3 - 1;
  }

  private patch(at: number, slot: 1 | 2, target: number): void {
    this.code[3 * at + slot] = target;
  }

  private get next(): number {
    return this.code.length / 3;
  }

  program(alts: RegexAst): void {
    this.alternatives(alts);
    this.emit(Op.Match);
  }

  private alternatives(alts: RegexAst): void {
    const jumps: number[] = [];
    alts.forEach((seq, k) => {
      const split = k < alts.length - 1 ? this.emit(Op.Split, 0, 0) : -1;
      if (split >= 0) this.patch(split, 1, this.next);
      for (const node of seq) this.node(node);
      if (split >= 0) {
        jumps.push(this.emit(Op.Jump));
        this.patch(split, 2, this.next);
      }
    });
    for (const jump of jumps) this.patch(jump, 1, this.next);
  }

  private once(node: RegexNode): void {
    if (node.type === "group") this.alternatives(node.alts);
    else if (node.type === "char" && node.code >= 0x80) this.emit(Op.Predicate, this.ids.get(node)!);
    else if (node.type === "char")
      this.emit(Op.Char, node.code >= 0x41 && node.code <= 0x5a ? node.code + 32 : node.code);
    else if (node.type === "class" && node.set === null) this.emit(Op.Predicate, this.ids.get(node)!);
    else if (node.type === "class") this.emit(Op.Class, this.ids.get(node)!);
    else if (node.type === "any") this.emit(Op.Any);
    else if (node.type === "assert") this.emit(ASSERT_OPS[node.kind]);
    else throw new Unsupported();
  }

  private node(node: RegexNode): void {
    for (let k = 0; k < node.min; k++) this.once(node);
    if (node.max === Infinity) {
      const split = this.emit(Op.Split);
      this.patch(split, 1, this.next);
      this.once(node);
      this.emit(Op.Jump, split);
      this.patch(split, 2, this.next);
      return;
    }
    const exits: number[] = [];
    for (let k = node.min; k < node.max; k++) {
      const split = this.emit(Op.Split);
      this.patch(split, 1, this.next);
      exits.push(split);
      this.once(node);
    }
    for (const split of exits) this.patch(split, 2, this.next);
  }
}

/**
 * Compiles a pattern for {@link verifyAt} and {@link searchFrom}: its instruction triples, or
 * null when the pattern uses something this engine does not run or is larger than
 * MAX_INSTRUCTIONS. Classes and predicates go into the registry's shared tables.
 */
export function compileVerifier(
  source: string,
  tables: { classes: ClassTable; predicates: PredicateTable },
): number[] | null {
  const ast = parseRegex(source);
  if (ast === null) return null;
  try {
    const ids = new Map<RegexNode, number>();
    intern(ast, tables, ids);
    const emitter = new Emitter(ids);
    emitter.program(ast);
    return emitter.code;
  } catch (error) {
    if (error instanceof Unsupported) return null;
    throw error;
  }
}

/** A registry's programs (instruction triples, each pattern at its own offset), classes and predicates. */
export interface VerifierTables {
  code: Int32Array;
  classes: Uint8Array;
  predicates: RegExp[];
}

// Scratch for the NFA simulation, shared by all registries (a route never awaits): visited
// marks per instruction and the current and next state lists.
const marks = new Uint32Array(MAX_INSTRUCTIONS);
let mark = 0;
let current = new Int32Array(MAX_INSTRUCTIONS);
let following = new Int32Array(MAX_INSTRUCTIONS);
let listed = 0;
// A mark stands for one position of one search: every thread of a step reads the same code
// point, and every state added in it sits at the same position. So a predicate's answer and
// the word boundary are worked out once per mark, whatever the number of threads asking — a
// predicate is a V8 regex call, several times an ASCII step (docs/scaling.md, "The work budget").
let predicateMarks = new Uint32Array(64);
let answers = new Uint8Array(64);
let boundaryMark = 0;
let boundaryHere = false;

function nextMark(): void {
  if (mark === 0xffffffff) {
    marks.fill(0);
    predicateMarks.fill(0);
    boundaryMark = 0;
    mark = 0;
  }
  mark++;
}

/** Room to remember the answers of `t`'s predicates. */
function fitPredicates(t: VerifierTables): void {
  if (predicateMarks.length >= t.predicates.length) return;
  const size = Math.max(t.predicates.length, 2 * predicateMarks.length);
  predicateMarks = new Uint32Array(size);
  answers = new Uint8Array(size);
}

/** Adds `pc` and what it reaches without consuming input at `pos`; returns true on Match. */
function addState(t: VerifierTables, base: number, pc: number, text: string, pos: number, list: Int32Array): boolean {
  const code = t.code;
  for (;;) {
    if (marks[pc] === mark) return false;
    marks[pc] = mark;
    const at = base + 3 * pc;
    const op = code[at]!;
    if (op === Op.Jump) {
      pc = code[at + 1]!;
      continue;
    }
    if (op === Op.Split) {
      if (addState(t, base, code[at + 1]!, text, pos, list)) return true;
      pc = code[at + 2]!;
      continue;
    }
    if (op === Op.Match) return true;
    if (op >= Op.Begin) {
      if (!assertion(op, text, pos)) return false;
      pc++;
      continue;
    }
    list[listed++] = pc;
    return false;
  }
}

function assertion(op: Op, text: string, pos: number): boolean {
  if (op === Op.Begin) return pos === 0;
  if (op === Op.End) return pos === text.length;
  if (boundaryMark !== mark) {
    boundaryMark = mark;
    boundaryHere =
      isRegexWordUnit(pos > 0 ? text.charCodeAt(pos - 1) : -1) !==
      isRegexWordUnit(pos < text.length ? text.charCodeAt(pos) : -1);
  }
  return op === Op.WordBoundary ? boundaryHere : !boundaryHere;
}

/** A predicate's answer on the step's code point, tested once per step. */
function predicate(t: VerifierTables, id: number, cp: number): boolean {
  if (predicateMarks[id] !== mark) {
    predicateMarks[id] = mark;
    answers[id] = t.predicates[id]!.test(String.fromCodePoint(cp)) ? 1 : 0;
  }
  return answers[id] === 1;
}

function consumes(t: VerifierTables, at: number, cp: number): boolean {
  const op = t.code[at]!;
  if (op === Op.Any) return cp !== 10 && cp !== 13 && cp !== 0x2028 && cp !== 0x2029;
  if (op === Op.Predicate) return predicate(t, t.code[at + 1]!, cp);
  if (op === Op.Char) {
    const c = t.code[at + 1]!;
    if (cp === c) return true;
    if (c < 0x61 || c > 0x7a) return false;
    return cp === c - 32 || (c === 0x73 && cp === 0x17f) || (c === 0x6b && cp === 0x212a);
  }
  const row = t.code[at + 1]! * CLASS_WIDTH;
  const folded = cp < 128 ? (cp >= 0x41 && cp <= 0x5a ? cp + 32 : cp) : cp === 0x17f ? 0x73 : cp === 0x212a ? 0x6b : -1;
  const member =
    (folded >= 0 && t.classes[row + folded] === 1) ||
    (cp >= 128 && cp <= 0xffff && t.classes[row + 128] === 1 && WHITESPACE[cp] === 1);
  return member !== (t.classes[row + 129] === 1);
}

/**
 * Where a program can resume once `factor` is known to be at the match start (and a leading
 * `\b`, if `boundaryChecked`, is known to hold): the instruction after its straight run of
 * those characters, or 0 when the program does not start that way.
 */
export function resumePoint(code: readonly number[], factor: string, boundaryChecked: boolean): number {
  let pc = boundaryChecked && code[0] === Op.WordBoundary ? 1 : 0;
  for (let k = 0; k < factor.length; k++, pc++) {
    if (code[3 * pc] !== Op.Char || code[3 * pc + 1] !== factor.charCodeAt(k)) return 0;
  }
  return pc;
}

/**
 * Does the program at `base` (an offset into `t.code`) match `text` from `pos`, starting at
 * instruction `pc` (0 = a match starting exactly at `pos`; see {@link resumePoint})? Nothing at
 * or past `end` is read: a match must end by then (assertions still see the whole text, so `$`
 * holds only at its real end).
 */
export function verifyAt(
  t: VerifierTables,
  base: number,
  text: string,
  pos: number,
  pc = 0,
  end = text.length,
): boolean {
  fitPredicates(t);
  listed = 0;
  nextMark();
  if (addState(t, base, pc, text, pos, current)) return true;
  while (listed > 0 && pos < end) {
    const cp = text.codePointAt(pos)!;
    const width = cp > 0xffff ? 2 : 1;
    if (pos + width > end) break;
    const count = listed;
    listed = 0;
    nextMark();
    for (let k = 0; k < count; k++) {
      const pc = current[k]!;
      if (consumes(t, base + 3 * pc, cp) && addState(t, base, pc + 1, text, pos + width, following)) return true;
    }
    pos += width;
    [current, following] = [following, current];
  }
  return false;
}

/**
 * Does the program at `base` match `text` anywhere from `from` on, ending by `end` (what
 * `RegExp.prototype.test` answers when `from` is 0 and `end` the text's length)? One pass: the start state joins the set at every position, so
 * the work is at most (characters × instructions) — linear in the input whatever the pattern.
 * Its step loop is verifyAt's, written out again on purpose: a shared step function made a
 * route with such patterns about 15% slower (measured).
 */
export function searchFrom(t: VerifierTables, base: number, text: string, from: number, end = text.length): boolean {
  fitPredicates(t);
  listed = 0;
  nextMark();
  let pos = from;
  if (addState(t, base, 0, text, pos, current)) return true;
  while (pos < end) {
    const cp = text.codePointAt(pos)!;
    const width = cp > 0xffff ? 2 : 1;
    if (pos + width > end) break;
    const count = listed;
    listed = 0;
    nextMark();
    for (let k = 0; k < count; k++) {
      const pc = current[k]!;
      if (consumes(t, base + 3 * pc, cp) && addState(t, base, pc + 1, text, pos + width, following)) return true;
    }
    pos += width;
    [current, following] = [following, current];
    // A match may also start here; the marks of this position keep the start state listed once.
    if (addState(t, base, 0, text, pos, current)) return true;
  }
  return false;
}

/**
 * A pattern's program with its class and predicate ids moved into a registry's tables: an
 * agent's part is compiled against tables of its own, and the link gives every id its place
 * in the shared ones (`classIds[local]`, `predicateIds[local]`).
 */
export function relocateProgram(
  code: ArrayLike<number>,
  classIds: readonly number[],
  predicateIds: readonly number[],
): number[] {
  const out = Array.from(code);
  for (let at = 0; at < out.length; at += 3) {
    if (out[at] === Op.Class) out[at + 1] = classIds[out[at + 1]!]!;
    else if (out[at] === Op.Predicate) out[at + 1] = predicateIds[out[at + 1]!]!;
  }
  return out;
}

/** Where a search cut short stands: the position reached and the threads alive there. */
export interface SearchState {
  pos: number;
  threads: Int32Array;
}

/**
 * {@link searchFrom} in pieces, for a route that must not hold the isolate (lane.ts): it reads
 * at most `positions` code units, then answers where it stands, to be given back (`state`) to
 * go on. Between two pieces other searches may run: the state is all that carries over.
 */
export function searchSlice(
  t: VerifierTables,
  base: number,
  text: string,
  state: SearchState | null,
  end: number,
  positions: number,
): boolean | SearchState {
  fitPredicates(t);
  let pos: number;
  if (state === null) {
    pos = 0;
    listed = 0;
    nextMark();
    if (addState(t, base, 0, text, pos, current)) return true;
  } else {
    pos = state.pos;
    current.set(state.threads);
    listed = state.threads.length;
  }
  for (let read = 0; pos < end; read++) {
    if (read === positions) return { pos, threads: current.slice(0, listed) };
    const cp = text.codePointAt(pos)!;
    const width = cp > 0xffff ? 2 : 1;
    if (pos + width > end) break;
    const count = listed;
    listed = 0;
    nextMark();
    for (let k = 0; k < count; k++) {
      const pc = current[k]!;
      if (consumes(t, base + 3 * pc, cp) && addState(t, base, pc + 1, text, pos + width, following)) return true;
    }
    pos += width;
    [current, following] = [following, current];
    if (addState(t, base, 0, text, pos, current)) return true;
  }
  return false;
}
