/**
 * Text rules of the keyword matcher: how keywords and inputs are normalised, which characters
 * are whitespace, and which characters count as "word" characters for whole-word matching.
 *
 * Keyword semantics (both sides get the same treatment):
 * - NFKC, then Unicode lower-case, so full-width `ＲＥＦＵＮＤ` and `Refund` both match `refund`;
 *   final sigma `ς` is folded to `σ` because `toLowerCase` picks one or the other by context.
 * - Whitespace runs count as one space, so `credit card` matches `credit\n  card`.
 * - Whole word at an end of the keyword whose character belongs to a space-separated script
 *   (Latin, Cyrillic, Greek, Arabic, digits…): the neighbouring input character there must not
 *   be such a word character. So `refund` does not match inside `refunds` or `prerefund`, but it
 *   does match in `refund,` `(refund)` `refund's` `refund_id` and in `我要refund谢谢` (punctuation,
 *   `_` and CJK neighbours are boundaries; letters, combining marks and digits are not).
 * - No boundary at an end whose character is CJK, Thai or another script written without spaces
 *   (Han, Hiragana, Katakana, Hangul, Bopomofo, Thai, Lao, Khmer, Myanmar): `退款` matches inside
 *   `我想申请退款。` A keyword mixing scripts gets the rule of the character at each end.
 */

const WHITESPACE_UNITS = [
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007,
  0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff,
];

/** Code unit → 1 when JavaScript's `\s` matches it. */
export const WHITESPACE: Uint8Array = new Uint8Array(65536);
for (const unit of WHITESPACE_UNITS) WHITESPACE[unit] = 1;

const LETTER_MARK_NUMBER = /^[\p{L}\p{M}\p{N}]$/u;
const UNSPACED_SCRIPT =
  /^[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}\p{scx=Bopomofo}\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}]$/u;

// BMP answers are cached (0 unknown, 1 no, 2 yes) so a boundary check is a table read after the
// first time a character is seen, without paying for a 65,536-entry table at start-up.
const wordCache = new Uint8Array(65536);
for (let unit = 0; unit < 128; unit++) {
  const char = String.fromCharCode(unit);
  wordCache[unit] = /[a-z0-9]/i.test(char) ? 2 : 1;
}

function classifyWord(codePoint: number): boolean {
  const char = String.fromCodePoint(codePoint);
  return LETTER_MARK_NUMBER.test(char) && !UNSPACED_SCRIPT.test(char);
}

/** Is this code point a letter, mark or number of a script written with spaces between words? */
export function isSpacedWordChar(codePoint: number): boolean {
  if (codePoint < 0) return false;
  if (codePoint > 0xffff) return classifyWord(codePoint);
  let known = wordCache[codePoint]!;
  if (known === 0) {
    known = classifyWord(codePoint) ? 2 : 1;
    wordCache[codePoint] = known;
  }
  return known === 2;
}

/** The code point that ends just before `index` (−1 at the start). */
export function codePointBefore(text: string, index: number): number {
  if (index <= 0) return -1;
  const low = text.charCodeAt(index - 1);
  if (low >= 0xdc00 && low <= 0xdfff && index >= 2) {
    const high = text.charCodeAt(index - 2);
    if (high >= 0xd800 && high <= 0xdbff) return (high - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
  }
  return low;
}

/** The code point that starts at `index` (−1 past the end). */
export function codePointAtOrNone(text: string, index: number): number {
  return index < text.length ? text.codePointAt(index)! : -1;
}

/** Is there a word boundary before `start` in `text` (for a keyword whose first char needs one)? */
export function boundaryBefore(text: string, start: number): boolean {
  return !isSpacedWordChar(codePointBefore(text, start));
}

/** Is there a word boundary after the unit at `end` (inclusive) in `text`? */
export function boundaryAfter(text: string, end: number): boolean {
  return !isSpacedWordChar(codePointAtOrNone(text, end + 1));
}

/** Case-insensitive text form of an input: NFKC, then Unicode lower-case. Whitespace is collapsed by the scanner. */
export function foldText(input: string): string {
  return input.normalize("NFKC").toLowerCase();
}

/**
 * The form a keyword is matched in: NFKC, lower-case, final sigma folded, whitespace runs as one
 * space, trimmed. Empty when nothing is left (such a keyword can never match).
 */
export function normalizeKeyword(keyword: string): string {
  return foldText(keyword).replace(/ς/g, "σ").replace(/\s+/g, " ").trim();
}

/** The first and last code points of a non-empty string. */
export function endCodePoints(text: string): [first: number, last: number] {
  return [text.codePointAt(0)!, codePointBefore(text, text.length)];
}

/** Does `\w` under flags `iu` match this unit? ASCII word characters, plus `ſ` and `K` (−1: no). */
export function isRegexWordUnit(unit: number): boolean {
  return (
    (unit >= 0x61 && unit <= 0x7a) ||
    (unit >= 0x41 && unit <= 0x5a) ||
    (unit >= 0x30 && unit <= 0x39) ||
    unit === 0x5f ||
    unit === 0x17f ||
    unit === 0x212a
  );
}
