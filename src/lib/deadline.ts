/**
 * A deadline as an AbortSignal that can be cleared. `AbortSignal.timeout` leaves its timer
 * running after the work is done, and a pending timer keeps a Durable Object awake (and
 * its eviction waiting); this one is cleared the moment the work settles. It aborts with
 * the same reason, a DOMException named TimeoutError.
 */
export interface Deadline {
  signal: AbortSignal;
  clear(): void;
}

export function deadline(ms: number): Deadline {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException(`The deadline of ${ms} ms passed.`, "TimeoutError")),
    ms,
  );
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}
