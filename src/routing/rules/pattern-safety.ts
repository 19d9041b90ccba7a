/**
 * Pattern admission: a trigger pattern must compile as a JavaScript regex (flags `iu`) and
 * must not nest unbounded quantifiers — `(a+)+`, `(\w*)*`, `(x+|y)+` — the shape behind
 * catastrophic backtracking. Checked once at registration, never on the routing path.
 */

export const PATTERN_FLAGS = "iu";

/** Why a pattern is refused, or null when it is admitted. */
export function checkPattern(source: string): string | null {
  const compiled = compilePattern(source);
  return compiled.ok ? null : compiled.reason;
}

/**
 * The admitted pattern as a regex (flags {@link PATTERN_FLAGS}, never `g`/`y`, so `test` keeps no
 * state between inputs), or why it is refused. The rule compiler uses this so each pattern is
 * compiled once.
 */
export function compilePattern(source: string): { ok: true; regex: RegExp } | { ok: false; reason: string } {
  let regex: RegExp;
  try {
    regex = new RegExp(source, PATTERN_FLAGS);
  } catch (error) {
    return { ok: false, reason: `does not compile: ${(error as Error).message}` };
  }
  if (hasNestedUnboundedQuantifier(source)) return { ok: false, reason: "nests unbounded quantifiers (catastrophic backtracking)" };
  return { ok: true, regex };
}

/** Length of the quantifier at `i` and whether it is unbounded, or null if there is none. */
function quantifierAt(source: string, i: number): { length: number; unbounded: boolean } | null {
  const char = source[i];
  if (char === "*" || char === "+") return { length: source[i + 1] === "?" ? 2 : 1, unbounded: true };
  if (char === "?") return { length: 1, unbounded: false };
  if (char === "{") {
    const m = /^\{(\d+)(,(\d*))?\}\??/.exec(source.slice(i));
    if (m) return { length: m[0].length, unbounded: m[2] !== undefined && m[3] === "" };
  }
  return null;
}

function hasNestedUnboundedQuantifier(source: string): boolean {
  // One frame per open group: does its body contain an unbounded quantifier?
  const stack: boolean[] = [false];
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const char = source[i];
    if (char === "\\") {
      i++;
      continue;
    }
    if (inClass) {
      if (char === "]") inClass = false;
      continue;
    }
    if (char === "[") {
      inClass = true;
      continue;
    }
    if (char === "(") {
      stack.push(false);
      continue;
    }
    if (char === ")") {
      const innerUnbounded = stack.pop() ?? false;
      const q = quantifierAt(source, i + 1);
      if (q?.unbounded && innerUnbounded) return true;
      if (innerUnbounded || q?.unbounded) stack[stack.length - 1] = true;
      if (q) i += q.length;
      continue;
    }
    const q = quantifierAt(source, i);
    if (q) {
      if (q.unbounded) stack[stack.length - 1] = true;
      i += q.length - 1;
    }
  }
  return false;
}
