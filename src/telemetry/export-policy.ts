/**
 * When a run's spans are exported, retried and given up (docs/observability.md, Export), pure.
 *
 * - Sampling is decided from the trace id alone, so every span of a trace — whichever
 *   object or isolate exports it — gets the same answer.
 * - A failed export is retried on EXPORT_RETRY_DELAYS_MS while its endpoint answers 5xx, 408
 *   or 429 or cannot be reached; past the last retry, or once its endpoint has been failing
 *   for EXPORT_FAILING_WINDOW_MS, it is dropped and its spans counted as dropped. Any other
 *   refusal (4xx, an address the policy refuses, a header secret missing) drops it at once:
 *   sending it again would not change the answer (OTLP/HTTP says the same of 4xx).
 * - A session keeps at most MAX_QUEUED_EXPORTS exports per destination; one more drops the oldest.
 */

/** Waits before each retry, in order: about 7.6 minutes in all. */
export const EXPORT_RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 300_000] as const;

/** How long an export's endpoint may keep failing before the export is dropped whatever its retries. */
export const EXPORT_FAILING_WINDOW_MS = 10 * 60_000;

/** Exports one session holds per destination (waiting, or waiting for a retry). */
export const MAX_QUEUED_EXPORTS = 8;

/** Runs sent in one request to one destination (each run's spans are one trace). */
export const EXPORT_BATCH_RUNS = 8;

/**
 * How long a session's export waits in its isolate for other sessions' exports to the same
 * destination, to go in one request with them (src/services/telemetry-batches.ts).
 */
export const EXPORT_LINGER_MS = 50;

/** Spans one request carries at most, however many sessions' exports join it. */
export const EXPORT_BATCH_SPANS = 2_000;

/** A request to a collector gives up after this long (the alarm is not held longer). */
export const EXPORT_TIMEOUT_MS = 10_000;

/**
 * Whether the trace `traceId` is sampled at `ratio`: its last 13 hex digits (52 random bits of
 * a W3C or derived id) as a fraction of 2^52, below the ratio. 0 samples nothing, 1 everything.
 */
export function sampled(traceId: string, ratio: number): boolean {
  if (ratio >= 1) return true;
  if (ratio <= 0) return false;
  return Number.parseInt(traceId.slice(-13), 16) / 2 ** 52 < ratio;
}

/**
 * How one attempt went: sent, worth retrying, or not (refused for good). A collector that
 * accepted the request may still have rejected some spans (OTLP's partial success): they are
 * dropped, not sent again (OTLP/HTTP: the client must not retry them).
 */
export type ExportOutcome =
  | { type: "sent"; rejected?: { spans: number; error: string } }
  | { type: "retryable"; error: string }
  | { type: "refused"; error: string };

/** An OTLP/HTTP answer's status as an outcome (OTLP/HTTP, Failures: 429, 502, 503, 504 are retryable; 5xx and 408 too here). */
export function outcomeOfStatus(status: number): ExportOutcome {
  if (status >= 200 && status < 300) return { type: "sent" };
  const error = `HTTP ${status}`;
  return status >= 500 || status === 408 || status === 429 ? { type: "retryable", error } : { type: "refused", error };
}

/** Bytes of a 2xx answer read for its partial success; a longer one is taken as full success. */
export const EXPORT_ANSWER_CAP = 16 * 1024;

/**
 * The partial success of an OTLP/HTTP JSON `ExportTraceServiceResponse` (null: none — all
 * accepted): `rejectedSpans` (an int64, so a decimal string or a number) above 0, with the
 * collector's `errorMessage`. An answer that is not such JSON is a full success, as an empty one is.
 */
export function partialSuccessOf(text: string, sentSpans: number): { spans: number; error: string } | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  const partial = (body as { partialSuccess?: { rejectedSpans?: unknown; errorMessage?: unknown } } | null)
    ?.partialSuccess;
  const rejected = Number(partial?.rejectedSpans ?? 0);
  if (!Number.isSafeInteger(rejected) || rejected <= 0) return null;
  const message = typeof partial?.errorMessage === "string" && partial.errorMessage ? `: ${partial.errorMessage}` : "";
  return {
    spans: Math.min(rejected, sentSpans),
    error: `the collector rejected ${rejected} spans${message}`.slice(0, 300),
  };
}

/** One session's spans in a request that carries several sessions' (src/services/telemetry-batches.ts). */
export interface Share {
  /** Where its spans start in the request. */
  offset: number;
  count: number;
}

/**
 * A caller's part of a batch's outcome: a failure is everyone's; a partial success's
 * rejected spans are counted against the batch's spans in order, so that the callers'
 * counts add up to the collector's.
 */
export function shareOf(outcome: ExportOutcome, share: Share): ExportOutcome {
  if (outcome.type !== "sent" || !outcome.rejected) return outcome;
  const spans = Math.min(Math.max(outcome.rejected.spans - share.offset, 0), share.count);
  return spans === 0 ? { type: "sent" } : { type: "sent", rejected: { spans, error: outcome.rejected.error } };
}

export type NextExport = { type: "retry"; attempts: number; at: number } | { type: "drop"; attempts: number };

/**
 * After a failed attempt: `attempts` made before it, `failingSince` when the first of this
 * export's failures happened (now, for the first).
 */
export function afterExportFailure(
  outcome: Exclude<ExportOutcome, { type: "sent" }>,
  attempts: number,
  failingSince: number,
  now: number,
): NextExport {
  const made = attempts + 1;
  if (outcome.type === "refused") return { type: "drop", attempts: made };
  const delay = EXPORT_RETRY_DELAYS_MS[made - 1];
  if (delay === undefined || now + delay - failingSince > EXPORT_FAILING_WINDOW_MS)
    return { type: "drop", attempts: made };
  return { type: "retry", attempts: made, at: now + delay };
}
