import { RelayApiError, RelayConnectionError } from "../errors.ts";

/**
 * The exit codes scripts can rely on (docs/cli.md, Exit codes). Every failure the user can act
 * on is one line on stderr and one of these; only a bug in the command shows a stack.
 */
export const EXIT = {
  /** Done. */
  OK: 0,
  /** Relay refused (a 4xx other than not found), or the outcome was a failure: a run failed, a file was refused. */
  FAILED: 1,
  /** The command line is wrong: an unknown command or option, a missing argument, no URL or key. */
  USAGE: 2,
  /** Relay could not be reached, or answered 5xx: try again later. */
  UNAVAILABLE: 3,
  /** What was named does not exist (404), or no longer does (410). */
  NOT_FOUND: 4,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure with its message and exit code; `code` is an API error code when Relay gave one. */
export class CliError extends Error {
  override readonly name = "CliError";
  readonly exitCode: ExitCode;
  readonly code: string;
  readonly details: unknown;

  constructor(message: string, exitCode: ExitCode = EXIT.FAILED, code = "CLI_ERROR", details?: unknown) {
    super(message);
    this.exitCode = exitCode;
    this.code = code;
    this.details = details;
  }
}

/** A usage mistake: exit 2. */
export function usage(message: string): CliError {
  return new CliError(message, EXIT.USAGE, "USAGE");
}

/** The exit code of an API error by its status. */
export function exitCodeOfStatus(status: number): ExitCode {
  if (status === 404 || status === 410) return EXIT.NOT_FOUND;
  if (status >= 500) return EXIT.UNAVAILABLE;
  return EXIT.FAILED;
}

/** `VALIDATION_FAILED`'s issues on the same line: `threshold: Too big; llm.model: Required`. */
function issuesOf(details: unknown): string {
  const issues = (details as { issues?: { path?: unknown; message?: unknown }[] } | null)?.issues;
  if (!Array.isArray(issues) || issues.length === 0) return "";
  const shown = issues.slice(0, 3).map((issue) => {
    const path = Array.isArray(issue.path) ? issue.path.join(".") : String(issue.path ?? "");
    return path ? `${path}: ${issue.message}` : String(issue.message);
  });
  return ` (${shown.join("; ")}${issues.length > 3 ? `; ${issues.length - 3} more` : ""})`;
}

/** Any thrown value as a CliError, or null for a bug (which keeps its stack). */
export function asCliError(error: unknown): CliError | null {
  if (error instanceof CliError) return error;
  if (error instanceof RelayApiError)
    return new CliError(
      `${error.code}: ${error.message}${issuesOf(error.details)} (HTTP ${error.status})`,
      exitCodeOfStatus(error.status),
      error.code,
      error.details,
    );
  if (error instanceof RelayConnectionError) return new CliError(error.message, EXIT.UNAVAILABLE, "UNREACHABLE");
  return null;
}
