/**
 * PII masking for the `redact_pii` handoff filter (docs/handoffs.md, What the target receives). Order matters: e-mails
 * first (their local part may hold digits), then card numbers, SSNs, phone numbers; a
 * masked token holds no digits, so later patterns never match inside it.
 *
 * Every pattern is anchored by lookbehinds and bounded so it runs in linear time on the
 * 32 KiB a message may hold (no nested ambiguous quantifiers).
 */

export const PII_TOKENS = {
  email: "[REDACTED_EMAIL]",
  card: "[REDACTED_CARD]",
  ssn: "[REDACTED_SSN]",
  phone: "[REDACTED_PHONE]",
} as const;

// Local part ≤ 64 chars; domain as dot-separated labels (no label contains a dot, so the
// repetition is unambiguous) and a 2–24 letter TLD.
const EMAIL =
  /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![A-Za-z0-9-])/g;

// 13–19 digits, single spaces or dashes allowed between them; not glued to other digits,
// and not after '+' (that is an international phone number).
const CARD = /(?<![\d+])\d(?:[ -]?\d){12,18}(?!\d)/g;

// ddd-dd-dddd, excluding areas 000, 666 and 9xx, group 00 and serial 0000 (never issued).
const SSN = /(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])/g;

// International: '+', then digit groups separated by one space, dot or dash, or in
// parentheses. A separator is required between groups, so each digit run is read whole.
const PHONE_INTL = /(?<![\w+])\+\d+(?:[ .-]?\(\d+\)|[ .-]\d+)*/g;

// North American national: (555) 123-4567, 555-123-4567, 555.123.4567, 555 123 4567.
const PHONE_NANP = /(?<![\w(+.-])(?:\(\d{3}\) ?|\d{3}[-. ])\d{3}[-. ]\d{4}(?![\w-])/g;

// Trunk-prefix national (0, then an area code not starting with 0): 020 7946 0958, 01 23 45 67 89,
// 07700 900123, (030) 1234567.
// At least one separator: a bare run of digits is more often an order number than a phone.
const PHONE_TRUNK = /(?<![\w(+-])(?:0[1-9]\d{0,3}|\(0[1-9]\d{0,3}\))(?:[ -]\d{2,8}){1,4}(?![\w-])/g;

/** The Luhn checksum over a string of digits. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return digits.length > 0 && sum % 10 === 0;
}

const digitsOf = (s: string): string => s.replace(/\D/g, "");

/**
 * International numbers read greedily may run into a following number ("+44 20 7946 0958
 * 2023"): drop trailing groups until at most 15 digits (E.164) remain, then mask if at
 * least 8 digits are left.
 */
function maskInternational(match: string): string {
  let end = match.length;
  let kept = match;
  while (digitsOf(kept).length > 15) {
    const cut = Math.max(kept.lastIndexOf(" "), kept.lastIndexOf("."), kept.lastIndexOf("-"), kept.lastIndexOf("("));
    if (cut <= 0) return match;
    end = cut;
    kept = match.slice(0, end);
  }
  return digitsOf(kept).length >= 8 ? PII_TOKENS.phone + match.slice(end) : match;
}

/** Masks e-mails, Luhn-valid card numbers, valid SSNs and phone numbers in a text. */
export function redactPii(text: string): string {
  return text
    .replace(EMAIL, PII_TOKENS.email)
    .replace(CARD, (m) => (luhnValid(digitsOf(m)) ? PII_TOKENS.card : m))
    .replace(SSN, PII_TOKENS.ssn)
    .replace(PHONE_INTL, maskInternational)
    .replace(PHONE_NANP, PII_TOKENS.phone)
    .replace(PHONE_TRUNK, (m) => {
      const n = digitsOf(m).length;
      return n >= 9 && n <= 12 ? PII_TOKENS.phone : m;
    });
}
