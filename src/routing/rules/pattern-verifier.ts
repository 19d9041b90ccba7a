/**
 * A small regex engine for the common shape of trigger patterns, used to confirm an anchored
 * pattern at the position where its factor occurred without calling V8's regex engine.
 *
 * Why: in a large registry a route tries a few dozen different patterns, each a separate V8
 * regex. A rarely used regex costs hundreds of ns in cache misses per call, and V8 discards
 * compiled regex code at major GCs, so the first routes after one recompile every regex they
 * touch (tens of µs each). Patterns this module supports instead run as a Thompson NFA over
 * shared typed arrays; the rest keep their V8 regex.
 *
 * Supported, with the semantics of flags `iu` and only the question "does a match start at
 * this position" (existence does not depend on greedy/lazy order): ASCII literals; `.`; `\d \D
 * \w \W \s \S`; classes of ASCII characters, ranges and `\d \w \s`; groups (capturing, named,
 * non-capturing) and alternation; quantifiers `* + ? {n} {n,} {n,m}` (lazy too); `^ $ \b \B`.
 * Anything else (lookaround, backreference, `\p`, `\x`/`\u`, non-ASCII literal) is refused.
 * Case-insensitive `u` matching equates an ASCII letter only with its other case and, for
 * `s`/`k`, with `ſ`/`K` — the same folding the rest of the rule tier relies on.
 */
import { parseRegex, type AssertKind, type RegexAst, type RegexNode } from "./regex-ast";
import { isRegexWordUnit, WHITESPACE } from "./text";
import { CLASS_ROW, type ClassTable } from "./verifier-classes";

export { ClassTable } from "./verifier-classes";

const enum Op {
  Char = 0,
  Class = 1,
  Any = 2,
  Split = 3,
  Jump = 4,
  Begin = 5,
  End = 6,
  WordBoundary = 7,
  NotWordBoundary = 8,
  Match = 9,
}

/** Instructions beyond this per pattern are refused (quantifier expansion can explode). */
const MAX_INSTRUCTIONS = 400;
// A local copy: the hot path reads it on every class test.
const CLASS_WIDTH = CLASS_ROW;

class Unsupported extends Error {}

const ASSERT_OPS: Record<AssertKind, Op> = { "^": Op.Begin, $: Op.End, "\\b": Op.WordBoundary, "\\B": Op.NotWordBoundary };
const GROUP_NAME = /^[A-Za-z_$][\w$]*$/;

/**
 * Interns the classes of the supported tree in source order (so the table grows as it did when
 * the verifier had its own parser), refusing at the first node this engine does not support.
 */
function internClasses(alts: RegexAst, classes: ClassTable, ids: Map<RegexNode, number>): void {
  for (const seq of alts) {
    for (const node of seq) {
      if (node.type === "char" && node.code >= 0x80) throw new Unsupported();
      if (node.type === "class") {
        if (node.set === null) throw new Unsupported();
        ids.set(node, classes.intern(node.set.members, node.set.spaces, node.set.negated));
      }
      if (node.type === "group") {
        if (node.modifiers !== undefined || (node.name !== undefined && !GROUP_NAME.test(node.name))) throw new Unsupported();
        internClasses(node.alts, classes, ids);
      }
      if (node.type === "lookaround" || node.type === "backref") throw new Unsupported();
    }
  }
}

/** Thompson construction into [op, a, b] triples. */
class Emitter {
  readonly code: number[] = [];
  constructor(private readonly classIds: Map<RegexNode, number>) {}

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
    else if (node.type === "char") this.emit(Op.Char, node.code >= 0x41 && node.code <= 0x5a ? node.code + 32 : node.code);
    else if (node.type === "class") this.emit(Op.Class, this.classIds.get(node)!);
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
 * Compiles a pattern for {@link verifyAt}: its instruction triples, or null when the pattern
 * uses something this engine does not support. Classes go into the shared `classes` table.
 */
export function compileVerifier(source: string, classes: ClassTable): number[] | null {
  const ast = parseRegex(source);
  if (ast === null) return null;
  try {
    const classIds = new Map<RegexNode, number>();
    internClasses(ast, classes, classIds);
    const emitter = new Emitter(classIds);
    emitter.program(ast);
    return emitter.code;
  } catch (error) {
    if (error instanceof Unsupported) return null;
    throw error;
  }
}

/** A registry's verifier programs (instruction triples, each pattern at its own offset) and classes. */
export interface VerifierTables {
  code: Int32Array;
  classes: Uint8Array;
}

// Scratch for the NFA simulation, shared by all registries (a route never awaits): visited
// marks per instruction and the current and next state lists.
const marks = new Uint32Array(MAX_INSTRUCTIONS);
let mark = 0;
let current = new Int32Array(MAX_INSTRUCTIONS);
let following = new Int32Array(MAX_INSTRUCTIONS);
let listed = 0;

function nextMark(): void {
  if (mark === 0xffffffff) {
    marks.fill(0);
    mark = 0;
  }
  mark++;
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
  const boundary = isRegexWordUnit(pos > 0 ? text.charCodeAt(pos - 1) : -1) !== isRegexWordUnit(pos < text.length ? text.charCodeAt(pos) : -1);
  return op === Op.WordBoundary ? boundary : !boundary;
}

function consumes(t: VerifierTables, at: number, cp: number): boolean {
  const op = t.code[at]!;
  if (op === Op.Any) return cp !== 10 && cp !== 13 && cp !== 0x2028 && cp !== 0x2029;
  if (op === Op.Char) {
    const c = t.code[at + 1]!;
    if (cp === c) return true;
    if (c < 0x61 || c > 0x7a) return false;
    return cp === c - 32 || (c === 0x73 && cp === 0x17f) || (c === 0x6b && cp === 0x212a);
  }
  const row = t.code[at + 1]! * CLASS_WIDTH;
  const folded = cp < 128 ? (cp >= 0x41 && cp <= 0x5a ? cp + 32 : cp) : cp === 0x17f ? 0x73 : cp === 0x212a ? 0x6b : -1;
  const member = (folded >= 0 && t.classes[row + folded] === 1) || (cp >= 128 && cp <= 0xffff && t.classes[row + 128] === 1 && WHITESPACE[cp] === 1);
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
 * instruction `pc` (0 = a match starting exactly at `pos`; see {@link resumePoint})?
 */
export function verifyAt(t: VerifierTables, base: number, text: string, pos: number, pc = 0): boolean {
  listed = 0;
  nextMark();
  if (addState(t, base, pc, text, pos, current)) return true;
  while (listed > 0 && pos < text.length) {
    const cp = text.codePointAt(pos)!;
    const width = cp > 0xffff ? 2 : 1;
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
