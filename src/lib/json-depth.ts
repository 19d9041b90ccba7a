import { RelayError } from "../errors";

/**
 * The nesting limit of every document the API reads (JSON bodies, Markdown agents' front
 * matter). Deeply nested input is refused before anything recursive (a parse, zod, the
 * JSON.stringify of a Durable Object write) ever walks it, so a 5,000-deep body is a
 * coded 400, not a stack overflow deep inside a write.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The deepest nesting of arrays and objects in JSON text (`{}` is 1, `{"a":[]}` is 2), by
 * one linear scan that skips strings: no parse, no recursion. Text that is not JSON still
 * gets a number; the parse that follows reports what is wrong with it.
 */
export function jsonTextDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c)
        i++; // a backslash escapes the next character, `\"` included
      else if (ch === 0x22) inString = false;
      continue;
    }
    if (ch === 0x22) inString = true;
    else if (ch === 0x7b || ch === 0x5b) max = Math.max(max, ++depth);
    else if ((ch === 0x7d || ch === 0x5d) && depth > 0) depth--;
  }
  return max;
}

/**
 * The nesting depth of a parsed value, walked with an explicit stack. Stops once past
 * `limit` (returning limit + 1), and visits a shared object once per depth at most, so
 * values built with references (YAML aliases) cost no more than their text.
 */
export function valueDepth(value: unknown, limit = MAX_JSON_DEPTH): number {
  let max = 0;
  const seen = new WeakMap<object, number>();
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, parentDepth] = stack.pop()!;
    if (typeof node !== "object" || node === null) continue;
    const depth = parentDepth + 1;
    if (depth > limit) return limit + 1;
    if ((seen.get(node) ?? 0) >= depth) continue;
    seen.set(node, depth);
    max = Math.max(max, depth);
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, depth]);
  }
  return max;
}

/** Throws JSON_TOO_DEEP when `depth` is over the limit. */
export function checkDepth(depth: number, what = "Request body", details: Record<string, unknown> = {}): void {
  if (depth <= MAX_JSON_DEPTH) return;
  throw new RelayError("JSON_TOO_DEEP", `${what} nests ${depth} levels deep; the limit is ${MAX_JSON_DEPTH}.`, {
    ...details,
    limit: MAX_JSON_DEPTH,
    depth,
  });
}
