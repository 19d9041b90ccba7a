import { expect } from "vitest";
import { encodeCursor } from "../../src/api/cursor";
import { call } from "./helpers";

/**
 * Cursors a hostile caller could send in place of a real one: garbage, NUL bytes, base64 of
 * a wrong-shaped position, and other spellings of the real cursor's own position (which
 * decode to it, but are not what the list hands out). Every one must be 400 INVALID_CURSOR.
 * Each is already percent-encoded for a query string.
 */
export function forgedCursors(real: string): string[] {
  const position = atob(real.replace(/-/g, "+").replace(/_/g, "/"));
  expect(encodeCursor(position), "the real cursor is canonical").toBe(real);
  const q = encodeURIComponent;
  const forged = [
    "fg",
    "%21%21%21",
    "%00",
    "%00%ff",
    "",
    "A".repeat(401),
    q(encodeCursor("x y")),
    q(encodeCursor(`${position}\u0000`)),
    q(encodeCursor("\u0000")),
    // The same position, spelt otherwise: with whitespace inside (atob skips it), in base64's
    // standard alphabet, padded, or with the last character's unused low bits set.
    q(`${real.slice(0, 4)} ${real.slice(4)}`),
    q(real.replace(/-/g, "+").replace(/_/g, "/")),
  ];
  // A position whose length is not a multiple of 3 leaves unused bits in the last character.
  if (position.length % 3 !== 0) {
    forged.push(q(`${real}${"=".repeat(4 - (real.length % 4))}`));
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = alphabet.indexOf(real.at(-1)!);
    const tweaked = `${real.slice(0, -1)}${alphabet[last | 1]}`;
    expect(atob(tweaked.replace(/-/g, "+").replace(/_/g, "/")), "the tweak keeps the position").toBe(position);
    forged.push(q(tweaked));
  }
  return [...new Set(forged)].filter((f) => f !== real);
}

/** Expects `path` (a list with its filters and `?`) to page with `real` and refuse every forged cursor. */
export async function expectForgedCursorsRefused(path: string, real: string): Promise<void> {
  const join = path.includes("?") ? "&" : "?";
  expect((await call("GET", `${path}${join}cursor=${real}`)).status, "the real cursor").toBe(200);
  for (const forged of forgedCursors(real)) {
    const res = await call("GET", `${path}${join}cursor=${forged}`);
    expect(res.status, `cursor=${forged.slice(0, 40)}`).toBe(400);
    expect(res.json.error.code, `cursor=${forged.slice(0, 40)}`).toBe("INVALID_CURSOR");
    expect(res.json.error.message).toMatch(/cursor/);
  }
}
