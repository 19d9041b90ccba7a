import { RelayApiError, RelayConnectionError, RelayReplyError } from "../errors.ts";

/**
 * The exit codes scripts can rely on (docs/cli.md, Exit codes). Every failure, a bug in the
 * command included, ends as one coded line on stderr (`relay: CODE: message`), or one JSON
 * object with `--json`, and one of these: never a stack.
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
  /** An answer came that relay cannot read: not JSON, or not the shape it reads (not Relay, a proxy, another version). */
  BAD_REPLY: 5,
  /** A bug in relay itself. */
  UNEXPECTED: 6,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/**
 * The codes of relay's own failures; a failure Relay answered keeps the API's code
 * (docs/api.md#errors). Each has a row in docs/cli.md, Errors.
 */
export const CODE = {
  USAGE: "USAGE",
  NO_API_KEY: "NO_API_KEY",
  KEY_NOT_FOR_URL: "KEY_NOT_FOR_URL",
  UNREACHABLE: "UNREACHABLE",
  BAD_REPLY: "BAD_REPLY",
  INVALID_AGENT_FILES: "INVALID_AGENT_FILES",
  /** `relay agents push --max-moved`: the files would move more recorded inputs than allowed. */
  TOO_MANY_MOVED: "TOO_MANY_MOVED",
  UNEXPECTED: "UNEXPECTED",
  /** Said by client/bin/relay.js itself, before it can load this file. */
  NODE_TOO_OLD: "NODE_TOO_OLD",
} as const;

export interface CliErrorOptions {
  /** The message `--json` shows, when not the line's (an API error's own message, without its status). */
  plain?: string;
  details?: unknown;
  /** Lines after the coded one in text (a command's usage, the files that cannot be sent); not in `--json`. */
  more?: string;
}

/** A failure with its message, its code (an API error code when Relay gave one) and its exit code. */
export class CliError extends Error {
  override readonly name = "CliError";
  readonly exitCode: ExitCode;
  readonly code: string;
  readonly details: unknown;
  readonly plain: string;
  readonly more: string | undefined;

  /** `code`: one of CODE, or the API's own. */
  constructor(message: string, exitCode: ExitCode, code: string, options: CliErrorOptions = {}) {
    super(message);
    this.exitCode = exitCode;
    this.code = code;
    this.details = options.details;
    this.plain = options.plain ?? message;
    this.more = options.more;
  }
}

/** A usage mistake: exit 2. */
export function usage(message: string, more?: string): CliError {
  return new CliError(message, EXIT.USAGE, CODE.USAGE, more === undefined ? {} : { more });
}

/** The exit code of an API error by its status. */
export function exitCodeOfStatus(status: number): ExitCode {
  if (status === 404 || status === 410) return EXIT.NOT_FOUND;
  if (status >= 500) return EXIT.UNAVAILABLE;
  return EXIT.FAILED;
}

/**
 * Text that came from elsewhere (an answer's message, a page's words) as one line, without the
 * control characters a terminal would act on: an answer cannot break the line or paint it.
 */
export function oneLine(text: string): string {
  return text
    .replace(/[\p{Cc}\u2028\u2029]+/gu, " ")
    .replace(/ {2,}/g, " ")
    .trim();
}

/** `VALIDATION_FAILED`'s issues on the same line: `threshold: Too big; llm.model: Required`. */
function issuesOf(details: unknown): string {
  const issues = (details as { issues?: unknown } | null)?.issues;
  if (!Array.isArray(issues) || issues.length === 0) return "";
  const shown = issues.slice(0, 3).map((issue: { path?: unknown; message?: unknown } | null) => {
    const path = Array.isArray(issue?.path) ? issue.path.join(".") : String(issue?.path ?? "");
    return path ? `${path}: ${issue?.message}` : String(issue?.message);
  });
  return ` (${shown.join("; ")}${issues.length > 3 ? `; ${issues.length - 3} more` : ""})`;
}

/** Any thrown value as a CliError; what no branch expects is a bug, said in one line as UNEXPECTED. */
export function cliErrorOf(error: unknown): CliError {
  if (error instanceof CliError) return error;
  if (error instanceof RelayApiError)
    return new CliError(
      `${error.message}${issuesOf(error.details)} (HTTP ${error.status})`,
      exitCodeOfStatus(error.status),
      error.code,
      { plain: error.message, details: error.details },
    );
  if (error instanceof RelayConnectionError) return new CliError(error.message, EXIT.UNAVAILABLE, CODE.UNREACHABLE);
  if (error instanceof RelayReplyError) return new CliError(error.message, EXIT.BAD_REPLY, CODE.BAD_REPLY);
  const what = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return new CliError(
    `${what} (a bug in relay: please report it with the command that led to it)`,
    EXIT.UNEXPECTED,
    CODE.UNEXPECTED,
  );
}

/** The failure's coded line: `relay: AGENT_NOT_FOUND: No agent named 'x'. (HTTP 404)`. */
export function failureLine(error: CliError): string {
  return `relay: ${oneLine(error.code)}: ${oneLine(error.message)}`;
}

/** What stderr shows of a failure: its coded line (and any lines after it), or with `--json` one JSON object. */
export function failureOutput(error: CliError, json: boolean): string {
  if (json) {
    const details = error.details === undefined ? {} : { details: error.details };
    return `${JSON.stringify({ error: { code: error.code, message: oneLine(error.plain), ...details } })}\n`;
  }
  return `${failureLine(error)}\n${error.more === undefined ? "" : `${error.more}\n`}`;
}
