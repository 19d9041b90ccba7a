import type { ErrorCode } from "./codes";
import { type ErrorBody, RelayError } from "./relay-error";

/** What a Durable Object method returns: errors are values, so codes survive RPC intact. */
export type Result<T> = { ok: true; value: T } | { ok: false; error: ErrorBody };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });

export function err(code: ErrorCode, message: string, details?: unknown): { ok: false; error: ErrorBody } {
  return { ok: false, error: details === undefined ? { code, message } : { code, message, details } };
}

/** Unwraps a Result in the Worker: a failure becomes a thrown RelayError for `onError`. */
export function unwrap<T>(result: Result<T>): T {
  if (result.ok) return result.value;
  throw RelayError.fromBody(result.error);
}
