/**
 * What a remote sends back may hold what Relay sent it: a server that echoes the header it got
 * (a 401 page quoting `Authorization`, a tool that returns its request) would carry a vault
 * secret into a run's error, a tool output or an agent's message, all of which the API shows.
 * Text that comes back from a call made with secrets passes through here first.
 */

/** Parts of a value this long or longer are redacted on their own too (a token without its `Bearer `). */
const MIN_PART = 8;

/** What stands in for a secret's value. */
export const REDACTED = "[secret]";

/**
 * A function that replaces, in a text, every value among `values` — as sent, JSON-escaped,
 * and each of its space-separated parts of at least 8 characters — with `[secret]`.
 */
export function secretRedactor(values: Iterable<string>): (text: string) => string {
  const needles = new Set<string>();
  for (const value of values) {
    for (const piece of [value, ...value.split(/\s+/).filter((part) => part.length >= MIN_PART)]) {
      if (piece === "") continue;
      needles.add(piece);
      needles.add(JSON.stringify(piece).slice(1, -1));
    }
  }
  if (needles.size === 0) return (text) => text;
  // Longest first, so a whole value goes before a part of it.
  const ordered = [...needles].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const needle of ordered) if (out.includes(needle)) out = out.split(needle).join(REDACTED);
    return out;
  };
}
