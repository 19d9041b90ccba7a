/**
 * Literal factors of a trigger pattern, for the prefilter. A pattern's regex runs only when one
 * of its factors occurred in the input, so what this module says must never be wrong; it may
 * say nothing (the pattern then runs on every input).
 *
 * The analysis runs on the tree of `regex-ast.ts` and finds:
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
import { type ClassSet, parseRegex, type RegexNode } from "./regex-ast";

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

/** The analysis view of a node: a literal ASCII char (lower case), one unit of a set, a zero-width assertion or a group. */
type Atom =
  | { t: "char"; c: string }
  | { t: "set"; first: CharSet }
  | { t: "assert"; boundary: boolean }
  | { t: "group"; alts: Node[][] };
type Node = Atom & { min: number; max: number };

function charSet(chars: string, nonAscii = false): CharSet {
  const set = new Uint8Array(129);
  for (const c of chars) set[c.charCodeAt(0)] = 1;
  if (nonAscii) set[128] = 1;
  return set;
}
const ALL = new Uint8Array(129).fill(1);
const complement = (set: CharSet): CharSet => set.map((bit, i) => (i === 128 ? 1 : 1 - bit));

/** A `\d`-like class: its members in both cases; with `\s`, `s` or `k` in it, non-ASCII units too. */
function classFirst(set: ClassSet): CharSet {
  const bits = charSet(set.members + set.members.toUpperCase(), set.spaces || /[sk]/.test(set.members));
  return set.negated ? complement(bits) : bits;
}

function literal(code: number): Atom {
  if (code > 0x20 && code < 0x7f) return { t: "char", c: String.fromCharCode(code).toLowerCase() };
  if (code <= 0x20) return { t: "set", first: charSet(String.fromCharCode(code)) };
  return { t: "set", first: ALL };
}

/**
 * The parsed tree in the analysis view. Brackets and undescribed escapes count as any unit;
 * lookaround is a zero-width assertion; a backreference, which may match the empty string, a
 * group of one nullable alternative.
 */
function lower(node: RegexNode): Node {
  const { min, max } = node;
  switch (node.type) {
    case "char":
      return { ...literal(node.code), min, max };
    case "any":
      return { t: "set", first: ALL, min, max };
    case "class":
      return { t: "set", first: node.set === null || node.bracket ? ALL : classFirst(node.set), min, max };
    case "assert":
      return { t: "assert", boundary: node.kind === "\\b", min, max };
    case "lookaround":
      return { t: "assert", boundary: false, min, max };
    case "group":
      return { t: "group", alts: node.alts.map((seq) => seq.map(lower)), min, max };
    case "backref":
      return { t: "group", alts: [[{ t: "set", first: ALL, min: 0, max: Infinity }]], min, max };
  }
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
    if (node?.t === "char" && node.min >= 1)
      return run + node.c === "" ? null : { strings: [run + node.c], after: null, boundary };
    if (node?.t === "group" && node.min >= 1) {
      const inner = prefixOf(node.alts);
      if (inner !== null) {
        const rest = firstOfSequence(seq, k + 1);
        let after = once(node) ? inner.after : null;
        if (after?.nullable) after = mergeAfter([{ set: after.set, nullable: false }, rest]);
        return {
          strings: inner.strings.map((s) => run + s),
          after,
          boundary: boundary || (run === "" && inner.boundary),
        };
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
  const ast = parseRegex(source);
  if (ast === null) return null;
  const alts = ast.map((seq) => seq.map(lower));
  const prefix = prefixOf(alts);
  if (prefix !== null && quality(prefix.strings) >= MIN_FACTOR_LENGTH) {
    const next = prefix.after !== null && !prefix.after.nullable ? prefix.after.set : null;
    return { factors: prefix.strings, anchored: true, next, boundaryBefore: prefix.boundary };
  }
  const factors = factorsOf(alts);
  if (factors !== null && quality(factors) >= MIN_FACTOR_LENGTH)
    return { factors, anchored: false, next: null, boundaryBefore: false };
  return null;
}
