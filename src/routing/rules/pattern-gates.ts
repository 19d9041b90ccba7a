/**
 * Gates for anchored patterns that share a factor. When a factor occurs, every anchored pattern
 * listed under it would be tried sticky at that position; in a large registry a common word is
 * the prefix of dozens of patterns and nearly all of those tries fail. A gate is one sticky
 * regex `(?:p1)|(?:p2)|…` over a chunk of them: it matches at a position exactly when one of
 * them does, so when it fails (the usual case) the whole chunk is skipped in one regex call.
 */
import { PATTERN_FLAGS } from "./pattern-safety";

/** Patterns per gate: small enough that a passing gate costs few individual tries. */
export const GATE_SIZE = 16;

/** Backreferences and named groups change meaning or clash when patterns are joined. */
const NOT_JOINABLE = /\\[1-9]|\\k<|\(\?<(?![=!])/;

/** The gate for a chunk of anchored patterns, or null (fewer than 2, or not safely joinable). */
export function buildGate(sources: readonly string[]): RegExp | null {
  if (sources.length < 2 || sources.some((s) => NOT_JOINABLE.test(s))) return null;
  try {
    return new RegExp(sources.map((s) => `(?:${s})`).join("|"), `${PATTERN_FLAGS}y`);
  } catch {
    return null;
  }
}
