/**
 * How the audit outbox drains to D1: the batch shape and the retry schedule. The policy
 * never gives up — D1 being down delays the audit, it never loses it (design §7).
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
 * Flushes of one object start at least this far apart, so the records of the handoffs a
 * busy session makes meanwhile reach D1 in one batch; a session idle for longer flushes at once.
 */
export const FLUSH_SPACING_MS = 500;

/** When a flush of records appended at `now` is due, given when the last one started (null: none yet). */
export function nextFlushAt(now: number, lastFlushAt: number | null, spacing = FLUSH_SPACING_MS): number {
  return lastFlushAt === null ? now : Math.max(now, lastFlushAt + spacing);
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
