/**
 * How the audit outbox drains to D1: the batch shape and the retry schedule. The policy
 * never gives up — D1 being down delays the audit, it never loses it (docs/architecture.md, The outbox).
 */

/** Rows written per D1 `batch` (one D1 transaction). */
export const FLUSH_BATCH_ROWS = 50;

/**
 * Rows per multi-row INSERT: 10 rows × 10 columns = 100 bound parameters, D1's ceiling.
 * A 50-row batch is then 5 statements, which keeps a flush far below the per-invocation
 * query limit.
 */
export const ROWS_PER_STATEMENT = 10;

/** Batches written per alarm run before yielding; the rest goes to a timer due at once. */
export const MAX_BATCHES_PER_RUN = 20;

/**
 * A record waits at most this long before its flush starts, and every record the object
 * appends meanwhile rides in the same batch: a busy session reaches D1 in one transaction
 * per window, however many handoffs it makes (a flush on the first record of a burst would
 * send it alone, then the rest).
 */
export const FLUSH_WINDOW_MS = 500;

/** When the flush of a record appended at `now` is due (a flush already due earlier stands). */
export function nextFlushAt(now: number, window = FLUSH_WINDOW_MS): number {
  return now + window;
}

/** Delay before the next flush attempt after `failures` consecutive failures (1 ≤ failures). */
export const FLUSH_BACKOFF_MS = [1_000, 2_000, 5_000, 15_000, 60_000] as const;

export function flushBackoffMs(failures: number): number {
  const index = Math.min(Math.max(failures, 1), FLUSH_BACKOFF_MS.length) - 1;
  return FLUSH_BACKOFF_MS[index]!;
}

/** Splits items into chunks of at most `size`, in order. */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  if (size < 1) throw new RangeError("chunk size must be at least 1");
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
