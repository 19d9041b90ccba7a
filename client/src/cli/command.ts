import type { ParseArgsOptionsConfig } from "node:util";
import type { RelayClient } from "../client.ts";
import type { ExitCode } from "./exit.ts";
import type { Output } from "./output.ts";
import type { Settings } from "./settings.ts";

/** What a command is given: its parsed arguments, where to write, and the client (made on first use). */
export interface Context {
  out: Output;
  positionals: string[];
  values: Record<string, string | boolean | string[] | undefined>;
  /** The client for the resolved URL and key; resolving them may fail with a usage error. */
  relay(): RelayClient;
  settings(): Settings;
  /** Lines typed on standard input (chat's messages and answers); null at its end. */
  readLine(prompt: string): Promise<string | null>;
  /** A secret from standard input, never echoed: piped in, or typed at a silent prompt; null when none came. */
  readSecret(prompt: string): Promise<string | null>;
  cwd: string;
  env: Record<string, string | undefined>;
  /** Aborted on a Ctrl-C no command claimed. */
  signal: AbortSignal;
  /** Until released, the next Ctrl-C calls `handler` instead of aborting `signal` (client/src/cli/interrupts.ts). */
  claimInterrupt(handler: () => void): () => void;
}

export interface Command {
  name: string;
  /** One line for `relay help`. */
  summary: string;
  /** The usage lines, shown with a usage error and by `relay help <command>`. */
  usage: string;
  options?: ParseArgsOptionsConfig;
  run(ctx: Context): Promise<ExitCode | undefined>;
}

/** A string option's value, if given. */
export function text(ctx: Context, name: string): string | undefined {
  const value = ctx.values[name];
  return typeof value === "string" ? value : undefined;
}

/** A boolean option. */
export function flag(ctx: Context, name: string): boolean {
  return ctx.values[name] === true;
}
