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

/**
 * `work`'s value, or `late()`'s once `ms` pass first, for a wait on work this call does not own
 * (another request's): it is not cancelled, only no longer waited for. The timer is cleared
 * the moment either settles, for the same reason as above.
 */
export function orAfter<T>(work: Promise<T>, ms: number, late: () => T): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const lateValue = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(late()), ms);
  });
  return Promise.race([work, lateValue]).finally(() => clearTimeout(timer));
}
