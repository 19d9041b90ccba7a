import { isReservedKey, RESERVED_KEYS } from "../schemas/reserved-keys";

/**
 * Tokenizer of the condition language (docs/handoffs.md, Conditions). Hand-written, one pass, no regex
 * backtracking: input is at most `MAX_CONDITION_LENGTH` characters.
 */

export type TokenKind =
  | "path" // identifier with optional dot segments: user.tier, items.0.price
  | "number"
  | "string"
  | "true"
  | "false"
  | "null"
  | "and"
  | "or"
  | "not"
  | "cmp" // == != < > <= >=
  | "minus"
  | "lparen"
  | "rparen"
  | "eof";

export type CompareOp = "==" | "!=" | "<" | ">" | "<=" | ">=";

export interface Token {
  kind: TokenKind;
  /** 0-based offset of the token's first character. */
  pos: number;
  /** The source text of the token. */
  text: string;
  /** Decoded value: the number, the string's content, the path segments, or the operator. */
  value?: number | string | string[];
}

/** A lexing or parsing failure: where, what was expected, what was found. */
export class ConditionSyntaxError extends Error {
  constructor(
    readonly position: number,
    readonly expected: string,
    readonly found: string,
  ) {
    super(`Invalid condition at position ${position}: expected ${expected}, found ${found}.`);
    this.name = "ConditionSyntaxError";
  }
}

// Maps, not object literals: a name like `constructor` must not find Object.prototype.
const KEYWORDS: ReadonlyMap<string, TokenKind> = new Map([
  ["and", "and"],
  ["or", "or"],
  ["not", "not"],
  ["true", "true"],
  ["false", "false"],
  ["null", "null"],
]);

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= "0" && c <= "9";
const isIdentStart = (c: string | undefined): boolean =>
  c !== undefined && ((c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c === "_" || c === "$");
const isIdentPart = (c: string | undefined): boolean => isIdentStart(c) || isDigit(c);

/** Describes the character at `pos` for error messages. */
export function describeAt(src: string, pos: number): string {
  return pos >= src.length ? "end of input" : JSON.stringify(src[pos]);
}

/** Splits a condition into tokens, ending with one `eof` token. Throws ConditionSyntaxError. */
export function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
      continue;
    }
    const start = i;
    if (isIdentStart(c)) {
      i = readPath(src, i, tokens);
      continue;
    }
    if (isDigit(c)) {
      i = readNumber(src, i, tokens);
      continue;
    }
    if (c === "'" || c === '"') {
      i = readString(src, i, tokens);
      continue;
    }
    const two = src.slice(i, i + 2);
    if (two === "==" || two === "!=" || two === "<=" || two === ">=") {
      if (src[i + 2] === "=") throw new ConditionSyntaxError(i + 2, "a value", describeAt(src, i + 2));
      tokens.push({ kind: "cmp", pos: start, text: two, value: two });
      i += 2;
    } else if (two === "&&" || two === "||") {
      tokens.push({ kind: two === "&&" ? "and" : "or", pos: start, text: two });
      i += 2;
    } else if (c === "<" || c === ">") {
      tokens.push({ kind: "cmp", pos: start, text: c, value: c });
      i++;
    } else if (c === "!") {
      tokens.push({ kind: "not", pos: start, text: c });
      i++;
    } else if (c === "(" || c === ")") {
      tokens.push({ kind: c === "(" ? "lparen" : "rparen", pos: start, text: c });
      i++;
    } else if (c === "-") {
      tokens.push({ kind: "minus", pos: start, text: c });
      i++;
    } else if (c === "=") {
      throw new ConditionSyntaxError(i, "'==' (a single '=' is not an operator)", describeAt(src, i));
    } else {
      throw new ConditionSyntaxError(i, "a value, an operator or '('", describeAt(src, i));
    }
  }
  tokens.push({ kind: "eof", pos: src.length, text: "" });
  return tokens;
}

function readPath(src: string, i: number, tokens: Token[]): number {
  const start = i;
  const segments: string[] = [];
  for (;;) {
    const segStart = i;
    // The first segment is an identifier; later ones may also be array indexes (items.0).
    if (isIdentStart(src[i]) || (segments.length > 0 && isDigit(src[i]))) {
      while (isIdentPart(src[i])) i++;
    } else {
      throw new ConditionSyntaxError(i, "a name after '.'", describeAt(src, i));
    }
    const segment = src.slice(segStart, i);
    if (isReservedKey(segment))
      throw new ConditionSyntaxError(
        segStart,
        `a name other than ${RESERVED_KEYS.join(", ")} (state cannot hold them)`,
        `'${segment}'`,
      );
    segments.push(segment);
    if (src[i] !== ".") break;
    i++;
  }
  const text = src.slice(start, i);
  if (segments.length > 1 && KEYWORDS.has(segments[0]!)) {
    throw new ConditionSyntaxError(start + segments[0]!.length, `an operator after '${segments[0]}'`, "'.'");
  }
  const keyword = segments.length === 1 ? KEYWORDS.get(text) : undefined;
  tokens.push(keyword ? { kind: keyword, pos: start, text } : { kind: "path", pos: start, text, value: segments });
  return i;
}

function readNumber(src: string, i: number, tokens: Token[]): number {
  const start = i;
  while (isDigit(src[i])) i++;
  if (src[i] === "." && isDigit(src[i + 1])) {
    i++;
    while (isDigit(src[i])) i++;
  }
  if (src[i] === "e" || src[i] === "E") {
    let j = i + 1;
    if (src[j] === "+" || src[j] === "-") j++;
    if (!isDigit(src[j])) throw new ConditionSyntaxError(j, "digits of an exponent", describeAt(src, j));
    while (isDigit(src[j])) j++;
    i = j;
  }
  if (isIdentStart(src[i]) || src[i] === ".")
    throw new ConditionSyntaxError(i, "an operator after a number", describeAt(src, i));
  const text = src.slice(start, i);
  tokens.push({ kind: "number", pos: start, text, value: Number(text) });
  return i;
}

const ESCAPES: ReadonlyMap<string, string> = new Map([
  ["\\", "\\"],
  ["'", "'"],
  ['"', '"'],
  ["n", "\n"],
  ["t", "\t"],
  ["r", "\r"],
  ["/", "/"],
  ["0", "\0"],
]);

function readString(src: string, i: number, tokens: Token[]): number {
  const start = i;
  const quote = src[i]!;
  i++;
  let out = "";
  for (;;) {
    const c = src[i];
    if (c === undefined) throw new ConditionSyntaxError(i, `closing ${quote}`, "end of input");
    if (c === quote) {
      i++;
      break;
    }
    if (c === "\\") {
      const e = src[i + 1];
      if (e === "u") {
        const hex = src.slice(i + 2, i + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex))
          throw new ConditionSyntaxError(i + 2, "4 hex digits after \\u", describeAt(src, i + 2));
        out += String.fromCharCode(parseInt(hex, 16));
        i += 6;
        continue;
      }
      const decoded = e === undefined ? undefined : ESCAPES.get(e);
      if (decoded === undefined)
        throw new ConditionSyntaxError(
          i + 1,
          "an escape (\\\\ \\' \\\" \\n \\t \\r \\/ \\0 \\uXXXX)",
          describeAt(src, i + 1),
        );
      out += decoded;
      i += 2;
      continue;
    }
    out += c;
    i++;
  }
  tokens.push({ kind: "string", pos: start, text: src.slice(start, i), value: out });
  return i;
}
