/**
 * Shared failure handling for the providers: abort racing and short upstream excerpts,
 * so every provider reports a dead deadline and a bad answer the same way.
 */
import { ProviderError } from "./types";

/** Shortens upstream text for error messages: enough to diagnose, never a whole body. */
export function excerpt(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** The `timeout` error for an aborted signal, naming the deadline when that is the cause. */
export function abortError(signal: AbortSignal, provider: string): ProviderError {
  // AbortSignal.timeout() aborts with a DOMException named TimeoutError; anything else is a cancellation.
  const reason: unknown = signal.reason;
  const timedOut =
    typeof reason === "object" && reason !== null && (reason as { name?: unknown }).name === "TimeoutError";
  return new ProviderError("timeout", timedOut ? `${provider}: request timed out` : `${provider}: request aborted`);
}

/**
 * Settles with `work` unless `signal` aborts first, then rejects with the `timeout` error.
 * For transports that may ignore the signal themselves.
 */
export function raceAbort<T>(work: Promise<T>, signal: AbortSignal, provider: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortError(signal, provider));
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    // Always attached, so `work` settling after the abort is never an unhandled rejection.
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
