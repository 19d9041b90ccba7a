import * as z from "zod";
import { RelayError } from "../errors";
import type { Position } from "./positions";

/**
 * Opaque paging cursors and the one list envelope. Every list route answers
 * `{ items, next_cursor }` (extra fields such as `pending` may sit beside them);
 * `next_cursor` is null on the last page, else the string to pass back as `?cursor=`.
 * A cursor is base64url (no padding) of a position the store understands: a D1 row id, a
 * Durable Object's sequence number or record id, an offset into a ranking.
 *
 * Cursors are checked, not signed: a position is the tenant's own (every query is scoped
 * to the tenant's key), so a forged one can reach nothing a cursor we issued could not. It
 * must be exactly what the list hands out — the canonical encoding of a position in that
 * list's grammar (./positions.ts) — or the request is 400 INVALID_CURSOR (docs/api.md).
 */

/** One page of a list, as every list route returns it. */
export interface ListPage<T> {
  items: T[];
  next_cursor: string | null;
}

/** Longer than any position's encoding (the longest, an inbox item id, is 116 characters). */
const MAX_CURSOR = 400;

/** base64url of a position, without padding: the only spelling `decodeCursor` takes back. */
export function encodeCursor(position: string): string {
  return btoa(position).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function invalidCursor(): RelayError {
  return new RelayError(
    "INVALID_CURSOR",
    "`cursor` is not one this list returned: pass back the previous page's next_cursor unchanged, with the same filters.",
    { parameter: "cursor" },
  );
}

/** The text a cursor encodes, or null when it is not the canonical base64url of any text. */
function base64urlText(cursor: string): string | null {
  if (cursor.length === 0 || cursor.length > MAX_CURSOR || !/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
  let text: string;
  try {
    text = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    return null;
  }
  // atob ignores the unused low bits of the last character, so several spellings decode alike.
  return encodeCursor(text) === cursor ? text : null;
}

/**
 * The position a cursor holds, in this list's grammar; INVALID_CURSOR for anything else
 * (bad base64url, a non-canonical spelling, another list's position, control characters).
 */
export function decodeCursor<T>(cursor: string, position: Position<T>): T;
export function decodeCursor<T>(cursor: string | undefined, position: Position<T>): T | undefined;
export function decodeCursor<T>(cursor: string | undefined, position: Position<T>): T | undefined {
  if (cursor === undefined) return undefined;
  const text = base64urlText(cursor);
  const parsed = text === null ? null : position.safeParse(text);
  if (!parsed?.success) throw invalidCursor();
  return parsed.data;
}

/**
 * An `after=` value: a position given as the store writes it (a message's `seq`, a record's
 * id), checked against the same grammar a cursor's position is; INVALID_CURSOR when it is not one.
 */
export function readAfter<T>(after: string, position: Position<T>): T {
  const parsed = position.safeParse(after);
  if (parsed.success) return parsed.data;
  throw new RelayError("INVALID_CURSOR", `\`after\` must be ${position.description ?? "a position of this list"}.`, {
    parameter: "after",
  });
}

/** The envelope: `next` is the position after which the next page starts, or null on the last page. */
export function listPage<T>(items: T[], next: string | number | null): ListPage<T> {
  return { items, next_cursor: next === null ? null : encodeCursor(String(next)) };
}

/**
 * `limit` and `cursor` of a list query; `maxLimit` and `fallback` are the route's. The cursor
 * is any string here: its checks are decodeCursor's, so every bad one is INVALID_CURSOR.
 */
export function pagingQuery(maxLimit: number, fallback: number) {
  return {
    limit: z.coerce.number().int().min(1).max(maxLimit).default(fallback),
    cursor: z.string().optional().describe("The previous page's `next_cursor`, unchanged."),
  };
}

/** A page of an in-memory list from offset `start` (a decoded cursor): for a ranking computed whole. */
export function pageByOffset<T>(
  all: readonly T[],
  { limit, start = 0 }: { limit: number; start?: number },
): ListPage<T> {
  const end = start + limit;
  return listPage(all.slice(start, end), end < all.length ? end : null);
}

/**
 * A page of an in-memory list sorted by `id` ascending, after id `after` (a decoded cursor):
 * stable while items are appended (a Durable Object's inbox, which it returns whole).
 */
export function pageAfterId<T extends { id: string }>(
  all: readonly T[],
  { limit, after }: { limit: number; after?: string },
): ListPage<T> {
  const rest = after === undefined ? all : all.filter((item) => item.id > after);
  const items = rest.slice(0, limit);
  return listPage(items, rest.length > limit ? items.at(-1)!.id : null);
}
