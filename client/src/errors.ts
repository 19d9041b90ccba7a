/**
 * What a call can fail with, as values a caller can branch on: the API's own error answer
 * (its stable code, docs/api.md#errors), or no answer at all.
 */

/** The body of every error answer: `{ error: { code, message, details? } }`. */
export interface ErrorBody {
  code: string;
  message: string;
  details?: unknown;
}

/** Relay answered with an error: its HTTP status and the error's code, message and details. */
export class RelayApiError extends Error {
  override readonly name = "RelayApiError";
  readonly status: number;
  readonly code: string;
  readonly details: unknown;

  constructor(status: number, error: ErrorBody) {
    super(error.message);
    this.status = status;
    this.code = error.code;
    this.details = error.details;
  }
}

/** No answer came: the URL is wrong, Relay is down, or the connection broke. */
export class RelayConnectionError extends Error {
  override readonly name = "RelayConnectionError";
  readonly url: string;

  constructor(url: string, cause: unknown) {
    super(`cannot reach ${url} (${reasonOf(cause)})`, { cause });
    this.url = url;
  }
}

/** `ECONNREFUSED`, `ENOTFOUND`…: the part of a failed fetch a person can act on. */
function reasonOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } } | null)?.cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}

/** An error answer's body as Relay writes it, or one made from the status when the body is not Relay's. */
export function errorBodyOf(status: number, body: unknown): ErrorBody {
  const error = (body as { error?: Partial<ErrorBody> } | null)?.error;
  if (error && typeof error.code === "string" && typeof error.message === "string")
    return {
      code: error.code,
      message: error.message,
      ...(error.details === undefined ? {} : { details: error.details }),
    };
  const text = typeof body === "string" && body.trim() !== "" ? `: ${body.trim().slice(0, 200)}` : "";
  return { code: `HTTP_${status}`, message: `Relay answered ${status} without an error body${text}` };
}

/** Reads an error response into a RelayApiError. */
export async function apiErrorOf(response: Response): Promise<RelayApiError> {
  const text = await response.text().catch(() => "");
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return new RelayApiError(response.status, errorBodyOf(response.status, body));
}
