import { z } from "zod";
import { RelayError } from "../errors";

/**
 * Opaque paging cursors and the one list envelope. Every list route answers
 * `{ items, next_cursor }` (extra fields such as `pending` may sit beside them);
 * `next_cursor` is null on the last page, else the string to pass back as `?cursor=`.
 * A cursor is base64url of a position the store understands: a D1 row id, a Durable
 * Object's sequence number or record id, an offset into a ranking.
 */

/** One page of a list, as every list route returns it. */
export interface ListPage<T> {
  items: T[];
  next_cursor: string | null;
}

export function encodeCursor(position: string): string {
  return btoa(position).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function invalidCursor(): RelayError {
  return new RelayError("INVALID_CURSOR", "The cursor is not one this API returned.");
}

/** The position a cursor holds; `shape`, when given, is what a position of this list looks like. */
export function decodeCursor(cursor: string, shape?: RegExp): string {
  let position: string;
  try {
    position = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    throw invalidCursor();
  }
  if (shape && !shape.test(position)) throw invalidCursor();
  return position;
}

/** A cursor over a sequence number or an offset (a non-negative integer). */
export function decodeIntCursor(cursor: string): number {
  return Number(decodeCursor(cursor, /^\d{1,15}$/));
}

/** The envelope: `next` is the position after which the next page starts, or null on the last page. */
export function listPage<T>(items: T[], next: string | number | null): ListPage<T> {
  return { items, next_cursor: next === null ? null : encodeCursor(String(next)) };
}

/** `limit` and `cursor` of a list query; `maxLimit` and `fallback` are the route's. */
export function pagingQuery(maxLimit: number, fallback: number) {
  return {
    limit: z.coerce.number().int().min(1).max(maxLimit).default(fallback),
    cursor: z.string().min(1).max(400).optional(),
  };
}

/** A page of an in-memory list by offset: for small lists a Durable Object returns whole. */
export function pageByOffset<T>(all: readonly T[], { limit, cursor }: { limit: number; cursor?: string }): ListPage<T> {
  const start = cursor === undefined ? 0 : decodeIntCursor(cursor);
  const end = start + limit;
  return listPage(all.slice(start, end), end < all.length ? end : null);
}

/**
 * A page of an in-memory list sorted by `id` ascending, after the cursor's id: stable
 * while items are appended (a Durable Object's inbox, which it returns whole).
 */
export function pageAfterId<T extends { id: string }>(
  all: readonly T[],
  { limit, cursor }: { limit: number; cursor?: string },
): ListPage<T> {
  const after = cursor === undefined ? undefined : decodeCursor(cursor);
  const rest = after === undefined ? all : all.filter((item) => item.id > after);
  const items = rest.slice(0, limit);
  return listPage(items, rest.length > limit ? items.at(-1)!.id : null);
}
