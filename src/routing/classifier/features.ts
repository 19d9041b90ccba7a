/**
 * Text → lexical features for the example classifier. One function serves compile and route,
 * so an example and a query always yield comparable terms.
 *
 * - NFKC, lower case, apostrophes dropped ("what's" → "whats").
 * - Words of space-separated scripts: a light English stem ("cards" → "card", "booked" → "book")
 *   plus the bigram of adjacent stems ("credit card"), which carries most of the phrase meaning.
 * - CJK runs (Chinese has no spaces, Japanese barely): character unigrams and bigrams.
 * - Character 3-grams of each word of two letters or more, with boundary marks ("<ca", "car",
 *   "ard", "rd>"): they let a model trained on a few examples generalise across spelling,
 *   inflection and compounds. A gram is kept as an exact integer key (its three UTF-16 code
 *   units), never as a string: routing is dominated by allocation, and grams are most of the
 *   features.
 * - Phrase features, as integer keys: skip bigrams (each stem paired with the stems two to four
 *   words before it: "substitute _ for", "name _ me"), which carry phrase structure adjacent
 *   bigrams miss, and the text's length in words (1, 2, … 6 or more): a "yes", a "goodbye" or a
 *   "hi there" is told apart by being short as much as by its words. Both help most when an
 *   agent has few examples (bench/tune-classifier.ts measures them).
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
/** One-letter words add no grams: their grams would only repeat the word itself. */
const MIN_GRAM_WORD = 2;
/** A stem is paired with the stems up to this many words before it (the adjacent one is its bigram). */
const SKIP_WINDOW = 4;
/** Texts of this many words or more share one length feature. */
const LENGTH_CAP = 6;
/**
 * Changes whenever extractFeatures would give a text other features: a compiled part made with
 * another version is extracted again when linked (lexical-classifier.ts).
 */
export const FEATURES_VERSION = 2;

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
  /** Phrase features as integer keys (skip bigrams, see pairKey, and the length, see lengthKey), distinct. */
  phrase: number[];
  /** For each, the index in `terms` of the word it belongs to (a pair's second word; −1 for the length). */
  phraseOwner: number[];
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

/** FNV-1a over a string's code units, from a given offset basis (32 bits). */
function fnv(text: string, basis: number): number {
  let h = basis;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** A 32-bit finaliser (MurmurHash3's), so nearby inputs spread over all bits. */
export function mix(h: number): number {
  let x = h ^ (h >>> 16);
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/** Two independent 32-bit hashes of a stem (what pairKey combines). */
export function stemHashes(s: string): [number, number] {
  return [fnv(s, 0x811c9dc5), fnv(s, 0x01000193)];
}

/**
 * The key of an ordered pair of stems: 2^48 plus 48 bits of hash. Gram keys stay below 2^48,
 * so the two share one table without clashing; two pairs share a key with odds of about
 * pairs² / 2^49 — a merged rare feature at worst.
 */
export function pairKey(a: readonly [number, number], b: readonly [number, number]): number {
  const hi = mix(Math.imul(a[0] ^ 0x9e3779b9, 0x27d4eb2f) ^ b[0]);
  const lo = mix(Math.imul(a[1], 0x165667b1) ^ b[1] ^ 0x5bd1e995) & 0xffff;
  return 281474976710656 + hi * 65536 + lo;
}

/** The key of the length feature: 2^49 + the length in words, capped (clear of gram and pair keys). */
export function lengthKey(words: number): number {
  return 562949953421312 + Math.min(words, LENGTH_CAP);
}

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
  const phrase: number[] = [];
  const phraseOwner: number[] = [];
  seenGrams.clear();
  let prev: string | null = null;
  // The hashes of the last SKIP_WINDOW stems, in a ring; a CJK run breaks the chain.
  const ring: [number, number][] = [];
  let words = 0;
  // Words for the length feature: words of spaced scripts, and CJK characters.
  let length = 0;
  for (const piece of tokens(text)) {
    const first = piece.charCodeAt(0);
    if (first >= 0x3040 && CJK_CHAR.test(piece)) {
      const chars = Array.from(piece);
      length += chars.length;
      for (let i = 0; i < chars.length; i++) {
        add(chars[i] as string);
        if (i + 1 < chars.length) add(`${chars[i]}${chars[i + 1]}`);
      }
      prev = null;
      words = 0;
      continue;
    }
    const s = stem(piece);
    const owner = add(s);
    if (prev !== null) add(`${prev} ${s}`);
    prev = s;
    length++;
    const h = stemHashes(s);
    for (let back = 2; back <= SKIP_WINDOW && back <= words; back++) {
      const key = pairKey(ring[(words - back) % SKIP_WINDOW] as [number, number], h);
      if (seenGrams.add(key)) {
        phrase.push(key);
        phraseOwner.push(owner);
      }
    }
    ring[words % SKIP_WINDOW] = h;
    words++;
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
  if (length > 0) {
    phrase.push(lengthKey(length));
    phraseOwner.push(-1);
  }
  return { terms, grams, gramOwner, phrase, phraseOwner };
}
