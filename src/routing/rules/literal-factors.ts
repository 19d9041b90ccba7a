/**
 * Literal factors of a trigger pattern, for the prefilter. A pattern's regex runs only when one
 * of its factors occurred in the input, so what this module says must never be wrong; it may
 * say nothing (the pattern then runs on every input).
 *
 * A small parser turns the `u`-mode source into a tree; the analysis then finds:
 * - factors: lower-case ASCII strings, one of which every match contains. In a sequence each
 *   run of literal characters that must appear is a candidate, and so is the set of a required
 *   group (an alternation's set is the union of its branches' and exists only when each has
 *   one); the best candidate (longest shortest member) wins.
 * - a prefix set, when every match starts with one of its strings (`order\s*#?\d{6}`,
 *   `(refund|return)\s+\w+`): the scanner then tries the regex sticky where such a string
 *   starts, and first checks two things plain JavaScript can: the character after the prefix
 *   must be able to start the rest of the pattern, and a leading `\b` must hold.
 * Only printable ASCII other than whitespace counts as literal: under `iu` an ASCII letter also
 * matches `ſ`/`K`, which the automaton folds. Anything the parser does not know gives up.
 */

/** Shorter factors would occur in almost every input: such patterns simply always run. */
export const MIN_FACTOR_LENGTH = 3;
/** Larger alternations are not worth a set: the pattern always runs. */
const MAX_SET_SIZE = 16;

/**
 * Characters that can come next: index 0–127 for ASCII, 128 for "any non-ASCII unit". A case-
 * insensitive `u` regex equates `s`/`k` with `ſ`/`K`, so those letters set 128 too.
 */
export type CharSet = Uint8Array;

/** How the prefilter treats a pattern. */
export interface PatternFactors {
  /** One of these occurs in every match (lower-case, each ≥ {@link MIN_FACTOR_LENGTH} long). */
  factors: string[];
  /** Every match starts with one of `factors`. */
  anchored: boolean;
  /** Anchored only: what the unit right after the factor must be, or null when anything may follow. */
  next: CharSet | null;
  /** Anchored only: the match starts right after a `\b` (so a word boundary must hold at the factor). */
  boundaryBefore: boolean;
}

/** A parsed atom: a literal ASCII char, one char of a set, a zero-width assertion or a group. */
type Atom = { t: "char"; c: string } | { t: "set"; first: CharSet } | { t: "assert"; boundary: boolean } | { t: "group"; alts: Node[][] };
type Node = Atom & { min: number; max: number };

class GiveUp extends Error {}

const SYNTAX = "^$\\.*+?()[]{}|/";

function charSet(chars: string, nonAscii = false): CharSet {
  const set = new Uint8Array(129);
  for (const c of chars) set[c.charCodeAt(0)] = 1;
  if (nonAscii) set[128] = 1;
  return set;
}
const ALL = new Uint8Array(129).fill(1);
const complement = (set: CharSet): CharSet => set.map((bit, i) => (i === 128 ? 1 : 1 - bit));
const DIGITS = charSet("0123456789");
const SPACES = charSet("\t\n\v\f\r ", true);
const WORD = charSet("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", true);
const CLASS_ESCAPES: Record<string, CharSet> = { d: DIGITS, D: complement(DIGITS), s: SPACES, S: complement(SPACES), w: WORD, W: complement(WORD) };
const CONTROL_ESCAPES: Record<string, string> = { n: "\n", r: "\r", t: "\t", v: "\v", f: "\f", "0": "\0" };

class Parser {
  private i = 0;
  constructor(private readonly s: string) {}

  parse(): Node[][] {
    const alts = this.disjunction();
    if (this.i !== this.s.length) throw new GiveUp();
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
      if (atom.t === "assert" && (min !== 1 || max !== 1)) throw new GiveUp();
      nodes.push({ ...atom, min, max });
    }
    return nodes;
  }

  private atom(): Atom {
    const char = this.s[this.i++]!;
    if (char === "^" || char === "$") return { t: "assert", boundary: false };
    if (char === ".") return { t: "set", first: ALL };
    if (char === "[") return this.skipClass();
    if (char === "(") return this.group();
    if (char === "\\") return this.escape();
    if ("*+?{}]".includes(char)) throw new GiveUp();
    return literal(char);
  }

  private group(): Atom {
    const s = this.s;
    let look = false;
    if (s[this.i] === "?") {
      const modifiers = /^\?(?::|[=!]|<[=!]|<[^>]*>|[a-z]*(?:-[a-z]+)?:)/.exec(s.slice(this.i));
      if (!modifiers) throw new GiveUp();
      look = /^\?(?:[=!]|<[=!])/.test(modifiers[0]);
      this.i += modifiers[0].length;
    }
    const alts = this.disjunction();
    if (s[this.i++] !== ")") throw new GiveUp();
    return look ? { t: "assert", boundary: false } : { t: "group", alts };
  }

  private escape(): Atom {
    const char = this.s[this.i++];
    if (char === undefined) throw new GiveUp();
    if (char === "b" || char === "B") return { t: "assert", boundary: char === "b" };
    if (SYNTAX.includes(char)) return { t: "char", c: char };
    const cls = CLASS_ESCAPES[char];
    if (cls) return { t: "set", first: cls };
    const control = CONTROL_ESCAPES[char];
    if (control) return { t: "set", first: charSet(control) };
    const shapes: Record<string, RegExp> = { c: /^[a-z]/i, x: /^[0-9a-f]{2}/i, u: /^(?:[0-9a-f]{4}|\{[0-9a-f]+\})/i, p: /^\{[^}]*\}/, P: /^\{[^}]*\}/ };
    const backref = char === "k" ? /^<[^>]*>/ : char >= "1" && char <= "9" ? /^[0-9]*/ : null;
    const shape = shapes[char] ?? backref;
    if (!shape) throw new GiveUp();
    const m = shape.exec(this.s.slice(this.i));
    if (!m) throw new GiveUp();
    this.i += m[0].length;
    // A backreference may match the empty string: a group of one empty alternative is nullable.
    return backref ? { t: "group", alts: [[{ t: "set", first: ALL, min: 0, max: Infinity }]] } : { t: "set", first: ALL };
  }

  private skipClass(): Atom {
    const s = this.s;
    if (s[this.i] === "^") this.i++;
    while (this.i < s.length && s[this.i] !== "]") this.i += s[this.i] === "\\" ? 2 : 1;
    if (this.i++ >= s.length) throw new GiveUp();
    return { t: "set", first: ALL };
  }

  private quantifier(): [number, number] {
    const s = this.s;
    const char = s[this.i];
    let q: [number, number] | null = null;
    if (char === "*") q = [0, Infinity];
    else if (char === "+") q = [1, Infinity];
    else if (char === "?") q = [0, 1];
    if (q) this.i++;
    else if (char === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(s.slice(this.i));
      if (!m) throw new GiveUp();
      this.i += m[0].length;
      q = [Number(m[1]), m[2] === undefined ? Number(m[1]) : m[3] === "" ? Infinity : Number(m[3])];
    }
    if (q && s[this.i] === "?") this.i++;
    return q ?? [1, 1];
  }
}

function literal(char: string): Atom {
  const code = char.charCodeAt(0);
  if (code > 0x20 && code < 0x7f) return { t: "char", c: char.toLowerCase() };
  if (code <= 0x20) return { t: "set", first: charSet(char) };
  return { t: "set", first: ALL };
}

function firstOfChar(c: string): CharSet {
  return charSet(c + c.toUpperCase(), c === "s" || c === "k");
}

/** FIRST set of a node, ignoring nullability. */
function first(node: Node): CharSet {
  if (node.t === "char") return firstOfChar(node.c);
  if (node.t === "set") return node.first;
  if (node.t === "assert") return new Uint8Array(129);
  const set = new Uint8Array(129);
  for (const alt of node.alts) set.set(firstOfSequence(alt, 0).set.map((bit, i) => bit | set[i]!));
  return set;
}

function nullable(node: Node): boolean {
  if (node.min === 0 || node.t === "assert") return true;
  return node.t === "group" && node.alts.some((alt) => alt.every(nullable));
}

/** What the sequence from `from` on can start with, and whether it can be empty. */
function firstOfSequence(seq: Node[], from: number): { set: CharSet; nullable: boolean } {
  const set = new Uint8Array(129);
  for (let k = from; k < seq.length; k++) {
    const f = first(seq[k]!);
    for (let i = 0; i < 129; i++) set[i] = set[i]! | f[i]!;
    if (!nullable(seq[k]!)) return { set, nullable: false };
  }
  return { set, nullable: true };
}

type FactorSet = string[] | null;

const quality = (set: string[]): number => set.reduce((min, s) => Math.min(min, s.length), Number.POSITIVE_INFINITY);

function better(a: FactorSet, b: FactorSet): FactorSet {
  if (a === null || b === null) return a ?? b;
  const qa = quality(a);
  const qb = quality(b);
  if (qa !== qb) return qa > qb ? a : b;
  return b.length < a.length ? b : a;
}

function union(sets: FactorSet[]): FactorSet {
  if (sets.some((s) => s === null)) return null;
  const merged = [...new Set(sets.flat() as string[])];
  return merged.length > MAX_SET_SIZE ? null : merged;
}

const once = (node: Node): boolean => node.min === 1 && node.max === 1;

/** A set one of which every match of the alternatives contains. */
function factorsOf(alts: Node[][]): FactorSet {
  return union(
    alts.map((seq) => {
      let best: FactorSet = null;
      let run = "";
      for (const node of seq) {
        if (node.t === "char" && once(node)) {
          run += node.c;
          continue;
        }
        if (node.t === "char" && node.min >= 1) run += node.c;
        if (run !== "") best = better(best, [run]);
        run = node.t === "char" && node.min >= 1 ? node.c : "";
        if (node.t === "group" && node.min >= 1) best = better(best, factorsOf(node.alts));
      }
      return run === "" ? best : better(best, [run]);
    }),
  );
}

/** `after` null = unknown; otherwise FIRST of what follows the prefix within these alternatives. */
interface Prefix {
  strings: string[];
  after: { set: CharSet; nullable: boolean } | null;
  boundary: boolean;
}

function mergeAfter(parts: Prefix["after"][]): Prefix["after"] {
  if (parts.some((p) => p === null)) return null;
  const set = new Uint8Array(129);
  for (const p of parts) for (let i = 0; i < 129; i++) set[i] = set[i]! | p!.set[i]!;
  return { set, nullable: parts.some((p) => p!.nullable) };
}

/** The strings every match of the alternatives starts with, and what can follow them. */
function prefixOf(alts: Node[][]): Prefix | null {
  const parts = alts.map((seq): Prefix | null => {
    let k = 0;
    let boundary = false;
    for (; k < seq.length && seq[k]!.t === "assert"; k++) boundary ||= (seq[k] as { boundary: boolean }).boundary;
    let run = "";
    for (; k < seq.length && seq[k]!.t === "char" && once(seq[k]!); k++) run += (seq[k] as { c: string }).c;
    const node = seq[k];
    if (node?.t === "char" && node.min >= 1) return run + node.c === "" ? null : { strings: [run + node.c], after: null, boundary };
    if (node?.t === "group" && node.min >= 1) {
      const inner = prefixOf(node.alts);
      if (inner !== null) {
        const rest = firstOfSequence(seq, k + 1);
        let after = once(node) ? inner.after : null;
        if (after?.nullable) after = mergeAfter([{ set: after.set, nullable: false }, rest]);
        return { strings: inner.strings.map((s) => run + s), after, boundary: boundary || (run === "" && inner.boundary) };
      }
    }
    return run === "" ? null : { strings: [run], after: firstOfSequence(seq, k), boundary };
  });
  if (parts.some((p) => p === null)) return null;
  const strings = union(parts.map((p) => p!.strings));
  if (strings === null) return null;
  return { strings, after: mergeAfter(parts.map((p) => p!.after)), boundary: parts.every((p) => p!.boundary) };
}

/**
 * The literal factors of a pattern, preferring a prefix set (anchored) when it is long enough;
 * null when none can be told (the pattern must then run on every input).
 */
export function requiredFactors(source: string): PatternFactors | null {
  let alts: Node[][];
  try {
    alts = new Parser(source).parse();
  } catch (error) {
    if (error instanceof GiveUp) return null;
    throw error;
  }
  const prefix = prefixOf(alts);
  if (prefix !== null && quality(prefix.strings) >= MIN_FACTOR_LENGTH) {
    const next = prefix.after !== null && !prefix.after.nullable ? prefix.after.set : null;
    return { factors: prefix.strings, anchored: true, next, boundaryBefore: prefix.boundary };
  }
  const factors = factorsOf(alts);
  if (factors !== null && quality(factors) >= MIN_FACTOR_LENGTH) return { factors, anchored: false, next: null, boundaryBefore: false };
  return null;
}
