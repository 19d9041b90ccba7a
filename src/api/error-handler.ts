import type { ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { type ErrorBody, isRelayError, statusOf } from "../errors";

/** The one place errors become HTTP: a RelayError's code picks the status. */
export const onError: ErrorHandler = (error, c) => {
  if (isRelayError(error)) {
    const body: ErrorBody =
      error.details === undefined
        ? { code: error.code, message: error.message }
        : { code: error.code, message: error.message, details: error.details };
    return c.json({ error: body }, statusOf(error.code) as 400);
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
