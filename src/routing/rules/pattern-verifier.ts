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
import { isRegexWordUnit, WHITESPACE } from "./text";
import { CLASS_ROW, ClassTable, DIGIT, SPACE, WORD } from "./verifier-classes";

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

type Piece = { kind: "char"; code: number } | { kind: "class"; id: number } | { kind: "any" } | { kind: "assert"; op: Op };
type Node = { piece: Piece; min: number; max: number } | { alts: Node[][]; min: number; max: number };

class Parser {
  private i = 0;
  constructor(
    private readonly s: string,
    private readonly classes: ClassTable,
  ) {}

  parse(): Node[][] {
    const alts = this.disjunction();
    if (this.i !== this.s.length) throw new Unsupported();
    return alts;
  }

  private disjunction(): Node[][] {
    const alts = [this.sequence()];
    while (this.s[this.i] === "|") {
      this.i++;
      alts.push(this.sequence());
    }
    return alts;
  }

  private sequence(): Node[] {
    const nodes: Node[] = [];
    for (let c = this.s[this.i]; c !== undefined && c !== "|" && c !== ")"; c = this.s[this.i]) {
      const atom = this.atom();
      const [min, max] = this.quantifier();
      if ("piece" in atom && atom.piece.kind === "assert" && (min !== 1 || max !== 1)) throw new Unsupported();
      nodes.push({ ...atom, min, max });
    }
    return nodes;
  }

  private atom(): { piece: Piece } | { alts: Node[][] } {
    const char = this.s[this.i++]!;
    if (char === "^") return { piece: { kind: "assert", op: Op.Begin } };
    if (char === "$") return { piece: { kind: "assert", op: Op.End } };
    if (char === ".") return { piece: { kind: "any" } };
    if (char === "[") return { piece: this.bracket() };
    if (char === "\\") return { piece: this.escape() };
    if (char === "(") {
      const named = /^\?<[A-Za-z_$][\w$]*>/.exec(this.s.slice(this.i));
      if (named) this.i += named[0].length;
      else if (this.s.startsWith("?:", this.i)) this.i += 2;
      else if (this.s[this.i] === "?") throw new Unsupported();
      const alts = this.disjunction();
      if (this.s[this.i++] !== ")") throw new Unsupported();
      return { alts };
    }
    const code = char.charCodeAt(0);
    if ("*+?{}]".includes(char) || code >= 0x80) throw new Unsupported();
    return { piece: { kind: "char", code: code >= 0x41 && code <= 0x5a ? code + 32 : code } };
  }

  private escape(): Piece {
    const char = this.s[this.i++];
    if (char === undefined) throw new Unsupported();
    if (char === "b") return { kind: "assert", op: Op.WordBoundary };
    if (char === "B") return { kind: "assert", op: Op.NotWordBoundary };
    const cls = this.classEscape(char);
    if (cls !== null) return { kind: "class", id: this.classes.intern(cls.members, cls.spaces, cls.negated) };
    const code = this.simpleEscape(char);
    return { kind: "char", code };
  }

  private classEscape(char: string): { members: string; spaces: boolean; negated: boolean } | null {
    const lower = char.toLowerCase();
    const members = lower === "d" ? DIGIT : lower === "w" ? WORD : lower === "s" ? SPACE : null;
    if (members === null) return null;
    return { members, spaces: lower === "s", negated: char !== lower };
  }

  /** Syntax-character and control escapes; anything else is refused. */
  private simpleEscape(char: string): number {
    if ("^$\\.*+?()[]{}|/".includes(char)) return char.charCodeAt(0);
    const control: Record<string, number> = { n: 10, r: 13, t: 9, v: 11, f: 12 };
    if (control[char] !== undefined) return control[char]!;
    if (char === "0" && !/[0-9]/.test(this.s[this.i] ?? "")) return 0;
    throw new Unsupported();
  }

  private bracket(): Piece {
    let negated = false;
    if (this.s[this.i] === "^") {
      negated = true;
      this.i++;
    }
    let members = "";
    let spaces = false;
    while (this.s[this.i] !== "]") {
      const from = this.classAtom();
      if (typeof from !== "number") {
        members += from.members;
        spaces ||= from.spaces;
        continue;
      }
      if (this.s[this.i] === "-" && this.s[this.i + 1] !== "]") {
        this.i++;
        const to = this.classAtom();
        if (typeof to !== "number" || to < from) throw new Unsupported();
        for (let c = from; c <= to; c++) members += String.fromCharCode(c);
      } else members += String.fromCharCode(from);
    }
    this.i++;
    return { kind: "class", id: this.classes.intern(members, spaces, negated) };
  }

  private classAtom(): number | { members: string; spaces: boolean } {
    const char = this.s[this.i++];
    if (char === undefined) throw new Unsupported();
    if (char !== "\\") {
      if (char.charCodeAt(0) >= 0x80) throw new Unsupported();
      return char.charCodeAt(0);
    }
    const escaped = this.s[this.i++];
    if (escaped === undefined) throw new Unsupported();
    const cls = this.classEscape(escaped);
    if (cls !== null) {
      if (cls.negated) throw new Unsupported();
      return { members: cls.members, spaces: cls.spaces };
    }
    return escaped === "-" ? 45 : this.simpleEscape(escaped);
  }

  private quantifier(): [number, number] {
    const s = this.s;
    let q: [number, number] | null = null;
    if (s[this.i] === "*") q = [0, Infinity];
    else if (s[this.i] === "+") q = [1, Infinity];
    else if (s[this.i] === "?") q = [0, 1];
    if (q) this.i++;
    else if (s[this.i] === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(s.slice(this.i));
      if (!m) throw new Unsupported();
      this.i += m[0].length;
      q = [Number(m[1]), m[2] === undefined ? Number(m[1]) : m[3] === "" ? Infinity : Number(m[3])];
    }
    if (q && s[this.i] === "?") this.i++;
    return q ?? [1, 1];
  }
}

/** Thompson construction into [op, a, b] triples. */
class Emitter {
  readonly code: number[] = [];

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

  program(alts: Node[][]): void {
    this.alternatives(alts);
    this.emit(Op.Match);
  }

  private alternatives(alts: Node[][]): void {
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

  private once(node: Node): void {
    if ("alts" in node) return this.alternatives(node.alts);
    const p = node.piece;
    if (p.kind === "char") this.emit(Op.Char, p.code);
    else if (p.kind === "class") this.emit(Op.Class, p.id);
    else if (p.kind === "any") this.emit(Op.Any);
    else this.emit(p.op);
  }

  private node(node: Node): void {
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
  try {
    const emitter = new Emitter();
    emitter.program(new Parser(source, classes).parse());
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
