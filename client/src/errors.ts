/**
 * What a call can fail with, as values a caller can branch on: the API's own error answer
 * (its stable code, docs/api.md#errors), an answer this client cannot read, or no answer at all.
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

/**
 * An answer came, but not one this client can read: a 2xx body that is not JSON, or JSON of
 * another shape than the part the caller reads (a URL that is not Relay, a proxy's page, a
 * Relay of another version). `problem` says what was wrong, naming the first field that was off.
 */
export class RelayReplyError extends Error {
  override readonly name = "RelayReplyError";
  readonly url: string;
  /** The request, e.g. `GET /v1/agents`, or "" when the caller did not say. */
  readonly request: string;
  readonly problem: string;

  constructor(url: string, request: string, problem: string, cause?: unknown) {
    super(`${url} answered ${request ? `${request} ` : ""}with ${problem}`, cause === undefined ? {} : { cause });
    this.url = url;
    this.request = request;
    this.problem = problem;
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
  // A proxy's HTML page: its first words, on one line.
  const words = typeof body === "string" ? body.replace(/\s+/g, " ").trim() : "";
  const text = words === "" ? "" : `: ${words.slice(0, 200)}`;
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
