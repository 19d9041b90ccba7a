/**
 * Text → lexical features for the example classifier. One function serves compile and route,
 * so an example and a query always yield comparable terms.
 *
 * - NFKC, lower case, apostrophes dropped ("what's" → "whats").
 * - Words of space-separated scripts: a light English stem ("cards" → "card", "booked" → "book")
 *   plus the bigram of adjacent stems ("credit card"), which carries most of the phrase meaning.
 * - CJK runs (Chinese has no spaces, Japanese barely): character unigrams and bigrams.
 * - Character 3-grams of each word, with boundary marks ("<ca", "car", "ard", "rd>"): they let
 *   a model trained on a few examples generalise across spelling, inflection and compounds.
 *   A gram is kept as an exact integer key (its three UTF-16 code units), never as a string:
 *   routing is dominated by allocation, and grams are most of the features.
 */
import { IntScratchSet } from "./int-table";

/** A term and how many times it occurs in the text. */
export interface TermCount {
  term: string;
  count: number;
}

const CJK_CHAR = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]/u;
const TOKEN = /[\p{L}\p{N}]+/gu;
const APOSTROPHES = /['\u2019\u02bc]/g;
const MAX_TOKENS = 512;
/** Routes run one at a time in an isolate, so one scratch set serves every call. */
const seenGrams = new IntScratchSet(256);
/** Shorter words add no grams: their few grams only repeat the word itself. */
const MIN_GRAM_WORD = 3;

/** A conservative English suffix stripper: merges inflections, never touches short words. */
export function stem(word: string): string {
  const n = word.length;
  if (n <= 3) return word;
  let w = word;
  if (w.endsWith("ies") && n > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("s") && !w.endsWith("ss") && !w.endsWith("us") && !w.endsWith("is")) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith("ing")) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith("ed")) w = w.slice(0, -2);
  if (w.length > 4 && w.endsWith("e")) w = w.slice(0, -1);
  return w;
}

/** Splits one letter/digit run into word pieces and CJK runs, in text order. */
function pieces(token: string, out: string[]): void {
  if (!CJK_CHAR.test(token)) {
    out.push(token);
    return;
  }
  let start = 0;
  let cjk = CJK_CHAR.test(token[0] ?? "");
  for (let i = 1; i <= token.length; i++) {
    const isCjk = i < token.length ? CJK_CHAR.test(token[i] ?? "") : !cjk;
    if (isCjk !== cjk) {
      out.push(token.slice(start, i));
      start = i;
      cjk = isCjk;
    }
  }
}

/** The features of one text. */
export interface TextFeatures {
  /** Stems, stem bigrams, CJK characters and character bigrams, in first-occurrence order. */
  terms: TermCount[];
  /** Character 3-grams of the words as integer keys (see gramKey), distinct. */
  grams: number[];
  /** For each gram, the index in `terms` of the first word it came from (for explanations). */
  gramOwner: number[];
}

/**
 * The exact key of a character 3-gram: 30 bits when every code unit is below 1024 (a small
 * integer for V8), else code units × 2^32, 2^16, 1 (still exact in a double, and ≥ 2^32).
 */
export function gramKey(c0: number, c1: number, c2: number): number {
  if (c0 < 1024 && c1 < 1024 && c2 < 1024) return (c0 << 20) | (c1 << 10) | c2;
  return c0 * 4294967296 + c1 * 65536 + c2;
}

const LT = 60;
const GT = 62;

// biome-ignore lint/suspicious/noControlCharactersInRegex: the class is every ASCII code point, controls included.
const NON_ASCII = /[^\x00-\x7f]/;
const CJK_ANY = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]/;

/** Normalised lower-case tokens (letter/digit runs, CJK runs split out). */
function tokens(text: string): string[] {
  // NFKC only when needed: it is the costliest step and a no-op on ASCII.
  let t = NON_ASCII.test(text) ? text.normalize("NFKC").toLowerCase() : text.toLowerCase();
  if (t.includes("'") || t.includes("\u2019") || t.includes("\u02bc")) t = t.replace(APOSTROPHES, "");
  let raw: string[] = t.match(TOKEN) ?? [];
  if (raw.length > MAX_TOKENS) raw = raw.slice(0, MAX_TOKENS);
  if (!CJK_ANY.test(t)) return raw;
  const split: string[] = [];
  for (const token of raw) pieces(token, split);
  return split;
}

/** For explanations: each word term (stem or stem bigram) of a text → the words as written. */
export function surfaceForms(text: string): Map<string, string> {
  const out = new Map<string, string>();
  let prev: { stem: string; word: string } | null = null;
  for (const piece of tokens(text)) {
    if (CJK_CHAR.test(piece)) {
      prev = null;
      continue;
    }
    const s = stem(piece);
    if (!out.has(s)) out.set(s, piece);
    if (prev !== null && !out.has(`${prev.stem} ${s}`)) out.set(`${prev.stem} ${s}`, `${prev.word} ${piece}`);
    prev = { stem: s, word: piece };
  }
  return out;
}

/** Terms and character grams of a text (one pass, few allocations: it runs per route). */
export function extractFeatures(text: string): TextFeatures {
  const index = new Map<string, number>();
  const terms: TermCount[] = [];
  const add = (term: string): number => {
    const i = index.get(term);
    if (i !== undefined) {
      (terms[i] as TermCount).count++;
      return i;
    }
    index.set(term, terms.length);
    terms.push({ term, count: 1 });
    return terms.length - 1;
  };
  const grams: number[] = [];
  const gramOwner: number[] = [];
  seenGrams.clear();
  let prev: string | null = null;
  for (const piece of tokens(text)) {
    const first = piece.charCodeAt(0);
    if (first >= 0x3040 && CJK_CHAR.test(piece)) {
      const chars = Array.from(piece);
      for (let i = 0; i < chars.length; i++) {
        add(chars[i] as string);
        if (i + 1 < chars.length) add(`${chars[i]}${chars[i + 1]}`);
      }
      prev = null;
      continue;
    }
    const s = stem(piece);
    const owner = add(s);
    if (prev !== null) add(`${prev} ${s}`);
    prev = s;
    if (piece.length < MIN_GRAM_WORD) continue;
    // Grams of "<piece>": code units at positions −1 (the "<") … length (the ">").
    const len = piece.length;
    let c0 = LT;
    let c1 = piece.charCodeAt(0);
    for (let i = 1; i <= len; i++) {
      const c2 = i < len ? piece.charCodeAt(i) : GT;
      const g = gramKey(c0, c1, c2);
      if (seenGrams.add(g)) {
        grams.push(g);
        gramOwner.push(owner);
      }
      c0 = c1;
      c1 = c2;
    }
  }
  return { terms, grams, gramOwner };
}
