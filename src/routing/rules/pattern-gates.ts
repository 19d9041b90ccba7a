/**
 * Chunk matchers for anchored patterns that share a factor. When a factor occurs, every anchored
 * pattern listed under it must be tried sticky at that position; in a large registry a common
 * word is the prefix of dozens of patterns, and each separate try of a rarely used regex costs a
 * few hundred ns in cache misses. A chunk matcher tries up to {@link GATE_SIZE} of them in one
 * sticky call: `(?=(p1)|)(?=(p2)|)…` always matches, and capture k is defined exactly when
 * pattern k matches at that position (a lookahead tries its pattern with full backtracking and
 * keeps its captures; the empty branch only makes the lookahead succeed when the pattern fails).
 */
import { PATTERN_FLAGS } from "./pattern-safety";

/** Patterns per chunk matcher. */
export const GATE_SIZE = 16;

/** Backreferences and named groups change meaning or clash when patterns are joined. */
const NOT_JOINABLE = /\\[1-9]|\\k<|\(\?<(?![=!])/;

/** Capturing groups in a (joinable, compiling) pattern: `(` not escaped, not in a class, not `(?`. */
export function countGroups(source: string): number {
  let count = 0;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const char = source[i];
    if (char === "\\") i++;
    else if (inClass) inClass = char !== "]";
    else if (char === "[") inClass = true;
    else if (char === "(" && source[i + 1] !== "?") count++;
  }
  return count;
}

/** A chunk matcher and, per pattern of the chunk, the index of its capture in `exec`'s result. */
export interface ChunkMatcher {
  regex: RegExp;
  captures: Int32Array;
}

/** The matcher for a chunk of anchored patterns, or null (fewer than 2, or not safely joinable). */
export function buildChunkMatcher(sources: readonly string[]): ChunkMatcher | null {
  if (sources.length < 2 || sources.some((s) => NOT_JOINABLE.test(s))) return null;
  const captures = new Int32Array(sources.length);
  let next = 1;
  sources.forEach((source, k) => {
    captures[k] = next;
    next += 1 + countGroups(source);
  });
  try {
    return { regex: new RegExp(sources.map((s) => `(?=(${s})|)`).join(""), `${PATTERN_FLAGS}y`), captures };
  } catch {
    return null;
  }
}
