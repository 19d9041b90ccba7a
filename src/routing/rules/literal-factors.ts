/**
 * Literal factors of a trigger pattern, for the prefilter: a set of lower-case ASCII strings such
 * that every match of the pattern (flags `iu`) contains at least one of them. A pattern's regex
 * runs only when one of its factors occurred in the input, so the set must never be wrong; it
 * may be absent (the pattern then always runs).
 *
 * How: a small parser of the `u`-mode regex grammar. In a sequence, each run of consecutive
 * literal characters that must appear is a candidate, and so is the set of a group that must
 * appear (not optional, not `*`); an alternation's set is the union of its branches' sets and
 * exists only when every branch has one. The best candidate (longest shortest member) wins.
 * Only printable ASCII other than whitespace counts as literal: under `iu` an ASCII letter also
 * matches `ſ`/`K`, which the automaton folds; any other character, escape sequence or construct
 * breaks the run, and anything this parser does not know gives up on the whole pattern.
 */

/** Shorter factors would occur in almost every input: such patterns simply always run. */
export const MIN_FACTOR_LENGTH = 3;
/** Larger alternations are not worth a set: the pattern always runs. */
const MAX_SET_SIZE = 16;

type FactorSet = string[] | null;

class GiveUp extends Error {}

const SYNTAX = "^$\\.*+?()[]{}|/";
const CLASS_ESCAPES = "dDwWsS";
const CONTROL_ESCAPES = "nrtvf0";

function quality(set: string[]): number {
  return set.reduce((min, s) => Math.min(min, s.length), Number.POSITIVE_INFINITY);
}

function better(a: FactorSet, b: FactorSet): FactorSet {
  if (a === null) return b;
  if (b === null) return a;
  const qa = quality(a);
  const qb = quality(b);
  if (qa !== qb) return qa > qb ? a : b;
  return b.length < a.length ? b : a;
}

class FactorParser {
  private i = 0;
  constructor(private readonly source: string) {}

  parse(): FactorSet {
    const set = this.disjunction();
    if (this.i !== this.source.length) throw new GiveUp();
    return set;
  }

  private disjunction(): FactorSet {
    let union: FactorSet = this.alternative();
    while (this.source[this.i] === "|") {
      this.i++;
      const branch = this.alternative();
      union = union === null || branch === null ? null : [...new Set([...union, ...branch])];
    }
    return union !== null && union.length > MAX_SET_SIZE ? null : union;
  }

  private alternative(): FactorSet {
    let best: FactorSet = null;
    let run = "";
    const flush = (): void => {
      if (run !== "") best = better(best, [run]);
      run = "";
    };
    for (;;) {
      const char = this.source[this.i];
      if (char === undefined || char === "|" || char === ")") break;
      const atom = this.atom();
      const min = this.quantifierMin();
      if (atom.kind === "assertion") {
        if (min !== null) throw new GiveUp();
        flush();
      } else if (atom.kind === "literal") {
        if (min === null) run += atom.char;
        else if (min >= 1) {
          run += atom.char;
          flush();
          run = atom.char;
        } else flush();
      } else {
        flush();
        if (atom.kind === "group" && (min === null || min >= 1)) best = better(best, atom.set);
      }
    }
    flush();
    return best;
  }

  private atom():
    | { kind: "literal"; char: string }
    | { kind: "other" }
    | { kind: "assertion" }
    | { kind: "group"; set: FactorSet } {
    const s = this.source;
    const char = s[this.i]!;
    this.i++;
    if (char === "^" || char === "$") return { kind: "assertion" };
    if (char === ".") return { kind: "other" };
    if (char === "[") {
      this.skipClass();
      return { kind: "other" };
    }
    if (char === "(") return this.group();
    if (char === "\\") return this.escape();
    if ("*+?{}]".includes(char)) throw new GiveUp();
    const code = char.charCodeAt(0);
    if (code > 0x20 && code < 0x7f) return { kind: "literal", char: char.toLowerCase() };
    return { kind: "other" };
  }

  private group(): { kind: "group"; set: FactorSet } | { kind: "assertion" } {
    const s = this.source;
    let lookaround = false;
    if (s[this.i] === "?") {
      const next = s[this.i + 1];
      if (next === ":") this.i += 2;
      else if (next === "=" || next === "!") {
        this.i += 2;
        lookaround = true;
      } else if (next === "<" && (s[this.i + 2] === "=" || s[this.i + 2] === "!")) {
        this.i += 3;
        lookaround = true;
      } else if (next === "<") {
        const close = s.indexOf(">", this.i);
        if (close < 0) throw new GiveUp();
        this.i = close + 1;
      } else {
        const modifiers = /^\?[a-z]*(?:-[a-z]+)?:/.exec(s.slice(this.i));
        if (!modifiers) throw new GiveUp();
        this.i += modifiers[0].length;
      }
    }
    const set = this.disjunction();
    if (s[this.i] !== ")") throw new GiveUp();
    this.i++;
    return lookaround ? { kind: "assertion" } : { kind: "group", set };
  }

  private escape(): { kind: "literal"; char: string } | { kind: "other" } | { kind: "assertion" } {
    const s = this.source;
    const char = s[this.i];
    if (char === undefined) throw new GiveUp();
    this.i++;
    if (char === "b" || char === "B") return { kind: "assertion" };
    if (SYNTAX.includes(char)) return { kind: "literal", char };
    if (CLASS_ESCAPES.includes(char) || CONTROL_ESCAPES.includes(char)) return { kind: "other" };
    if (char === "c") return this.skip(/^[a-z]/i);
    if (char === "x") return this.skip(/^[0-9a-f]{2}/i);
    if (char === "u") return this.skip(/^(?:[0-9a-f]{4}|\{[0-9a-f]+\})/i);
    if (char === "p" || char === "P") return this.skip(/^\{[^}]*\}/);
    if (char === "k") return this.skip(/^<[^>]*>/);
    if (char >= "1" && char <= "9") return this.skip(/^[0-9]*/);
    throw new GiveUp();
  }

  private skip(shape: RegExp): { kind: "other" } {
    const m = shape.exec(this.source.slice(this.i));
    if (!m) throw new GiveUp();
    this.i += m[0].length;
    return { kind: "other" };
  }

  private skipClass(): void {
    const s = this.source;
    if (s[this.i] === "^") this.i++;
    while (this.i < s.length && s[this.i] !== "]") this.i += s[this.i] === "\\" ? 2 : 1;
    if (this.i >= s.length) throw new GiveUp();
    this.i++;
  }

  /** The quantifier's minimum after an atom, or null when there is no quantifier. */
  private quantifierMin(): number | null {
    const s = this.source;
    const char = s[this.i];
    let min: number | null = null;
    if (char === "*" || char === "?") min = 0;
    else if (char === "+") min = 1;
    if (min !== null) this.i++;
    else if (char === "{") {
      const m = /^\{(\d+)(?:,\d*)?\}/.exec(s.slice(this.i));
      if (!m) throw new GiveUp();
      this.i += m[0].length;
      min = Number(m[1]);
    }
    if (min !== null && s[this.i] === "?") this.i++;
    return min;
  }
}

/**
 * The required literal factors of a pattern, lower-case, each at least {@link MIN_FACTOR_LENGTH}
 * long; null when none can be told (the pattern must then run on every input).
 */
export function requiredFactors(source: string): string[] | null {
  let set: FactorSet;
  try {
    set = new FactorParser(source).parse();
  } catch (error) {
    if (error instanceof GiveUp) return null;
    throw error;
  }
  return set !== null && quality(set) >= MIN_FACTOR_LENGTH ? set : null;
}
