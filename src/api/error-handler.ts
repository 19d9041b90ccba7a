import type { ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { type ErrorBody, isRelayError, statusOf } from "../errors";

/**
 * The seconds a QUOTA_EXCEEDED refusal asks the caller to wait (details.retry_after_s), as
 * `Retry-After` says them; none for a count limit, which no wait frees.
 */
export function retryAfterOf(body: Pick<ErrorBody, "code" | "details">): string | null {
  if (body.code !== "QUOTA_EXCEEDED") return null;
  const seconds = (body.details as { retry_after_s?: unknown } | undefined)?.retry_after_s;
  return typeof seconds === "number" && Number.isInteger(seconds) && seconds > 0 ? String(seconds) : null;
}

/** The one place errors become HTTP: a RelayError's code picks the status (and a quota's Retry-After). */
export const onError: ErrorHandler = (error, c) => {
  if (isRelayError(error)) {
    const body: ErrorBody =
      error.details === undefined
        ? { code: error.code, message: error.message }
        : { code: error.code, message: error.message, details: error.details };
    const retryAfter = retryAfterOf(body);
    return c.json({ error: body }, statusOf(error.code) as 400, retryAfter ? { "Retry-After": retryAfter } : {});
  }
  if (error instanceof HTTPException) {
    return c.json({ error: { code: "VALIDATION_FAILED", message: error.message } }, error.status);
  }
  console.error("unhandled error", error);
  return c.json({ error: { code: "INTERNAL", message: "Internal error." } }, 500);
};

export const onNotFound: NotFoundHandler = (c) =>
  c.json(
    { error: { code: "NOT_FOUND", message: `No route for ${c.req.method} ${new URL(c.req.url).pathname}.` } },
    404,
  );
