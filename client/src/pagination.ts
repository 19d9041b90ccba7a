/** One page of any Relay list: `{ items, next_cursor }` (docs/api.md, Lists and pagination). */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/**
 * Every item of a list, page after page: `fetchPage` is called with no cursor, then with each
 * page's `next_cursor` until it is null. Pages are fetched as the loop asks for items, so a
 * loop that breaks early fetches no more. `limit` stops after that many items in all.
 */
export async function* paginate<T>(
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
  options: { limit?: number } = {},
): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  let left = options.limit ?? Number.POSITIVE_INFINITY;
  while (left > 0) {
    const page = await fetchPage(cursor);
    for (const item of page.items) {
      if (left-- <= 0) return;
      yield item;
    }
    if (page.next_cursor === null || page.items.length === 0) return;
    cursor = page.next_cursor;
  }
}
