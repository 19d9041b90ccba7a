/**
 * One parser for the `u`-mode regex source of trigger patterns, shared by the prefilter's factor
 * analysis (`literal-factors.ts`), the matcher (`pattern-verifier.ts`) and pattern admission
 * (`pattern-safety.ts`, which refuses lookaround, backreferences and modifiers by name).
 * What it does not understand makes {@link parseRegex} return null. Its callers only see
 * sources that compile with flags `iu`, so syntax `u` mode forbids (a legacy octal `\01`) is
 * simply refused.
 */

/** A set of characters: ASCII members (any case), whether it holds `\s`, whether it is negated. */
export interface ClassSet {
  members: string;
  spaces: boolean;
  negated: boolean;
}

/** One zero-width assertion, written as in the source. */
export type AssertKind = "^" | "$" | "\\b" | "\\B";

/**
 * An atom. `char` is one code point as written (case kept), from a literal or a syntax/control
 * escape. `class` is one code point of a set: `\d`-like escapes and `[...]` (`bracket`); `set` is
 * null where the parser does not describe it (`\x \u \c \p \P`, brackets holding more than ASCII,
 * ranges, `\d \w \s` and simple escapes); `source` is the class as written.
 */
export type RegexAtom =
  | { type: "char"; code: number }
  | { type: "any" }
  | { type: "class"; set: ClassSet | null; bracket: boolean; source: string }
  | { type: "assert"; kind: AssertKind }
  | { type: "group"; alts: RegexAst; name: string | undefined; modifiers: string | undefined }
  | { type: "lookaround"; alts: RegexAst }
  | { type: "backref" };

/** An atom with its quantifier (`{1,1}` when there is none; `max` may be Infinity). */
export type RegexNode = RegexAtom & { min: number; max: number };

/** A disjunction: its alternatives, each a sequence of nodes. */
export type RegexAst = RegexNode[][];

export const DIGIT = "0123456789";
export const WORD = "abcdefghijklmnopqrstuvwxyz0123456789_";
export const SPACE = "\t\n\v\f\r ";

const CLASS_ESCAPES: Record<string, ClassSet> = {
  d: { members: DIGIT, spaces: false, negated: false },
  D: { members: DIGIT, spaces: false, negated: true },
  w: { members: WORD, spaces: false, negated: false },
  W: { members: WORD, spaces: false, negated: true },
  s: { members: SPACE, spaces: true, negated: false },
  S: { members: SPACE, spaces: true, negated: true },
};
const SYNTAX = "^$\\.*+?()[]{}|/";
const CONTROL: Record<string, number> = { n: 10, r: 13, t: 9, v: 11, f: 12 };
/** Escapes of one unit the tree does not describe, and what must follow the letter. */
const OPAQUE_ESCAPES: Record<string, RegExp> = {
  c: /^[a-z]/i,
  x: /^[0-9a-f]{2}/i,
  u: /^(?:[0-9a-f]{4}|\{[0-9a-f]+\})/i,
  p: /^\{[^}]*\}/,
  P: /^\{[^}]*\}/,
};
const GROUP_OPEN = /^\?(?::|[=!]|<[=!]|<([^>]*)>|([a-z]*(?:-[a-z]+)?):)/;

class Unsupported extends Error {}

/** The code of a syntax or control escape (`\0` only when no digit follows), or null. */
function simpleEscape(char: string, following: string | undefined): number | null {
  if (SYNTAX.includes(char)) return char.charCodeAt(0);
  if (CONTROL[char] !== undefined) return CONTROL[char]!;
  if (char === "0" && !/[0-9]/.test(following ?? "")) return 0;
  return null;
}

/** The set of a bracket class's body (between `[`/`[^` and `]`), or null when it is not described. */
function bracketSet(body: string, negated: boolean): ClassSet | null {
  let i = 0;
  const classAtom = (): number | ClassSet | null => {
    const char = body[i++]!;
    if (char !== "\\") return char.charCodeAt(0) < 0x80 ? char.charCodeAt(0) : null;
    const escaped = body[i++]!;
    const cls = CLASS_ESCAPES[escaped];
    if (cls) return cls.negated ? null : cls;
    return escaped === "-" ? 45 : simpleEscape(escaped, body[i]);
  };
  let members = "";
  let spaces = false;
  while (i < body.length) {
    const from = classAtom();
    if (from === null) return null;
    if (typeof from !== "number") {
      members += from.members;
      spaces ||= from.spaces;
      continue;
    }
    if (body[i] === "-" && i + 1 < body.length) {
      i++;
      const to = classAtom();
      if (typeof to !== "number" || to < from) return null;
      for (let c = from; c <= to; c++) members += String.fromCharCode(c);
    } else members += String.fromCharCode(from);
  }
  return { members, spaces, negated };
}

class Parser {
  private i = 0;
  constructor(private readonly s: string) {}

  parse(): RegexAst {
    const alts = this.disjunction();
    if (this.i !== this.s.length) throw new Unsupported();
    return alts;
  }

  private disjunction(): RegexAst {
    const alts = [this.sequence()];
    while (this.s[this.i] === "|") {
      this.i++;
      alts.push(this.sequence());
    }
    return alts;
  }

  private sequence(): RegexNode[] {
    const nodes: RegexNode[] = [];
    for (let c = this.s[this.i]; c !== undefined && c !== "|" && c !== ")"; c = this.s[this.i]) {
      const atom = this.atom();
      const [min, max] = this.quantifier();
      if ((atom.type === "assert" || atom.type === "lookaround") && (min !== 1 || max !== 1)) throw new Unsupported();
      nodes.push({ ...atom, min, max });
    }
    return nodes;
  }

  private atom(): RegexAtom {
    const start = this.i;
    const char = this.s[this.i++]!;
    if (char === "^" || char === "$") return { type: "assert", kind: char };
    if (char === ".") return { type: "any" };
    if (char === "[") return this.withSource(this.bracket(), start);
    if (char === "(") return this.group();
    if (char === "\\") return this.withSource(this.escape(), start);
    if ("*+?{}]".includes(char)) throw new Unsupported();
    // `u` mode reads a surrogate pair as one character.
    const code = this.s.codePointAt(start)!;
    this.i = start + (code > 0xffff ? 2 : 1);
    return { type: "char", code };
  }

  private withSource(atom: RegexAtom, start: number): RegexAtom {
    return atom.type === "class" ? { ...atom, source: this.s.slice(start, this.i) } : atom;
  }

  private group(): RegexAtom {
    const open = this.s[this.i] === "?" ? GROUP_OPEN.exec(this.s.slice(this.i)) : null;
    if (this.s[this.i] === "?" && !open) throw new Unsupported();
    if (open) this.i += open[0].length;
    const alts = this.disjunction();
    if (this.s[this.i++] !== ")") throw new Unsupported();
    if (open && /^\?<?[=!]/.test(open[0])) return { type: "lookaround", alts };
    return { type: "group", alts, name: open?.[1], modifiers: open?.[2] };
  }

  private escape(): RegexAtom {
    const char = this.s[this.i++];
    if (char === undefined) throw new Unsupported();
    if (char === "b" || char === "B") return { type: "assert", kind: char === "b" ? "\\b" : "\\B" };
    const cls = CLASS_ESCAPES[char];
    if (cls) return { type: "class", set: cls, bracket: false, source: "" };
    const code = simpleEscape(char, this.s[this.i]);
    if (code !== null) return { type: "char", code };
    const backref = char === "k" ? /^<[^>]*>/ : char >= "1" && char <= "9" ? /^[0-9]*/ : null;
    const shape = OPAQUE_ESCAPES[char] ?? backref;
    const m = shape?.exec(this.s.slice(this.i));
    if (!m) throw new Unsupported();
    this.i += m[0].length;
    return backref ? { type: "backref" } : { type: "class", set: null, bracket: false, source: "" };
  }

  private bracket(): RegexAtom {
    const s = this.s;
    const negated = s[this.i] === "^";
    if (negated) this.i++;
    const start = this.i;
    while (this.i < s.length && s[this.i] !== "]") this.i += s[this.i] === "\\" ? 2 : 1;
    if (this.i >= s.length) throw new Unsupported();
    return { type: "class", set: bracketSet(s.slice(start, this.i++), negated), bracket: true, source: "" };
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
      if (!m) throw new Unsupported();
      this.i += m[0].length;
      q = [Number(m[1]), m[2] === undefined ? Number(m[1]) : m[3] === "" ? Infinity : Number(m[3])];
    }
    if (q && s[this.i] === "?") this.i++;
    return q ?? [1, 1];
  }
}

/** The tree of a `u`-mode regex source, or null when it uses syntax this parser does not know. */
export function parseRegex(source: string): RegexAst | null {
  try {
    return new Parser(source).parse();
  } catch (error) {
    if (error instanceof Unsupported) return null;
    throw error;
  }
}
