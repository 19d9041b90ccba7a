import type { ErrorCode } from "./codes";

/** The JSON shape of every error Relay returns: `{ "error": ErrorBody }`. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  details?: unknown;
}

/**
 * An error that is the caller's or the domain's, not a bug: it carries a stable code.
 * Thrown inside the Worker; returned as a `Result` across Durable Object RPC.
 */
export class RelayError extends Error {
  override readonly name = "RelayError";
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }

  toBody(): ErrorBody {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }

  static fromBody(body: ErrorBody): RelayError {
    return new RelayError(body.code, body.message, body.details);
  }
}

export function isRelayError(err: unknown): err is RelayError {
  // `instanceof` does not survive RPC; the name and code do.
  return err instanceof RelayError || (err instanceof Error && err.name === "RelayError" && "code" in err);
}
