import { createInterface, type Interface } from "node:readline";
import { type ParseArgsOptionsConfig, parseArgs } from "node:util";
import { createRelayClient, type RelayClient } from "../client.ts";
import type { Command, Context } from "./command.ts";
import { agents } from "./commands/agents.ts";
import { audit } from "./commands/audit.ts";
import { chat } from "./commands/chat.ts";
import { config } from "./commands/config.ts";
import { inbox } from "./commands/inbox.ts";
import { memory } from "./commands/memory.ts";
import { route } from "./commands/route.ts";
import { secrets } from "./commands/secrets.ts";
import { tail } from "./commands/tail.ts";
import { usage as usageCommand } from "./commands/usage.ts";
import { cliErrorOf, EXIT, type ExitCode, failureOutput, usage } from "./exit.ts";
import type { Interrupts } from "./interrupts.ts";
import { Output } from "./output.ts";
import { readSecret } from "./read-secret.ts";
import { resolveSettings, type Settings } from "./settings.ts";

/**
 * `relay`: Relay from a terminal, on the typed client (docs/cli.md). `main` parses the command
 * line, runs one command and returns its exit code; it never exits the process itself, so
 * the tests can run it in-process too.
 */

export const COMMANDS: readonly Command[] = [
  route,
  config,
  agents,
  secrets,
  chat,
  inbox,
  memory,
  tail,
  audit,
  usageCommand,
];

const GLOBAL_OPTIONS = {
  json: { type: "boolean" },
  url: { type: "string" },
  profile: { type: "string" },
  "no-color": { type: "boolean" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
} as const satisfies ParseArgsOptionsConfig;

const VALUED = new Set(["--url", "--profile"]);
const VERSION = "0.1.0";

export interface Io {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown; isTTY?: boolean };
  env: Record<string, string | undefined>;
  cwd: string;
  /** Aborted on a Ctrl-C no command claimed. */
  signal: AbortSignal;
  /**
   * Where Ctrl-C is pressed, whose signal is `signal`: a command may claim a press (chat's
   * running turn), and readline's own Ctrl-C on a terminal is pressed here. Without it, a
   * press is only the signal's abort.
   */
  interrupts?: Interrupts;
}

function help(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    "relay: Relay from a terminal (docs/cli.md)",
    "",
    "usage: relay <command> [arguments] [--json] [--url <url>] [--profile <name>] [--no-color]",
    "",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "relay help <command> shows a command's usage. Relay's URL and key come from --url or --profile,",
    "RELAY_URL and RELAY_API_KEY, or the config file's default profile (docs/cli.md, Connecting).",
    "Exit codes: 0 done, 1 refused or failed, 2 usage, 3 Relay unreachable or 5xx, 4 not found,",
    "5 an answer relay cannot read, 6 a bug in relay.",
  ].join("\n");
}

/** The command's name: the first argument that is neither an option nor a global option's value. */
function splitCommand(args: readonly string[]): { name: string | undefined; rest: string[] } {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") break;
    if (VALUED.has(arg)) {
      i++;
      continue;
    }
    if (!arg.startsWith("-")) return { name: arg, rest: [...args.slice(0, i), ...args.slice(i + 1)] };
  }
  return { name: undefined, rest: [...args] };
}

/** Lines from standard input: prompts shown on a terminal only; null at the end of input or on Ctrl-C. */
function lineReader(io: Io): { read(prompt: string): Promise<string | null>; close(): void } {
  let rl: Interface | null = null;
  let lines: AsyncIterator<string> | null = null;
  // One listener for the whole conversation (one per read would pile up on the signal).
  const aborted = new Promise<null>((resolve) =>
    io.signal.addEventListener("abort", () => resolve(null), { once: true }),
  );
  const terminal = Boolean(io.stdin.isTTY) && Boolean(io.stdout.isTTY);
  const open = () => {
    // On a terminal readline echoes and edits the line, so it writes to stdout; from a pipe it only reads.
    if (!rl) {
      rl = terminal
        ? createInterface({ input: io.stdin, output: io.stdout as NodeJS.WritableStream, terminal: true })
        : createInterface({ input: io.stdin, terminal: false });
      // A terminal's Ctrl-C reaches readline as a key, not as SIGINT: it is pressed where a SIGINT would be.
      const interrupts = io.interrupts;
      if (terminal && interrupts) rl.on("SIGINT", () => interrupts.press());
    }
    lines ??= rl[Symbol.asyncIterator]();
    return lines;
  };
  return {
    async read(prompt) {
      if (io.signal.aborted) return null;
      const iterator = open();
      if (terminal) {
        rl!.setPrompt(prompt);
        rl!.prompt();
      }
      const next = await Promise.race([iterator.next(), aborted]);
      return next === null || next.done ? null : next.value;
    },
    close() {
      rl?.close();
    },
  };
}

export async function main(argv: readonly string[], io: Io): Promise<ExitCode> {
  const { name, rest } = splitCommand(argv);
  const wantsJson = argv.includes("--json");
  const out = new Output({
    json: wantsJson,
    stdout: io.stdout,
    stderr: io.stderr,
    env: io.env,
    noColor: argv.includes("--no-color"),
  });
  const reader = lineReader(io);
  try {
    if (
      name === "help" ||
      (name === undefined && (argv.includes("--help") || argv.includes("-h") || argv.length === 0))
    ) {
      const topic = name === "help" ? splitCommand(rest).name : undefined;
      const command = COMMANDS.find((c) => c.name === topic);
      if (topic && !command) throw usage(`unknown command "${topic}"; relay help lists them`);
      out.line(command ? `${command.summary}\n\n${command.usage}` : help());
      return EXIT.OK;
    }
    if (name === undefined && argv.includes("--version")) {
      out.line(VERSION);
      return EXIT.OK;
    }
    const command = COMMANDS.find((c) => c.name === name);
    if (!command)
      throw usage(
        name ? `unknown command "${name}"; relay help lists them` : "no command given; relay help lists them",
      );
    let parsed: ReturnType<typeof parseArgs>;
    try {
      parsed = parseArgs({
        args: rest,
        options: { ...GLOBAL_OPTIONS, ...command.options },
        allowPositionals: true,
        strict: true,
      });
    } catch (error) {
      throw usage((error as Error).message.split("\n")[0]!, `usage:\n${command.usage}`);
    }
    if (parsed.values.help) {
      out.line(`${command.summary}\n\n${command.usage}`);
      return EXIT.OK;
    }
    let settings: Settings | undefined;
    let client: RelayClient | undefined;
    const ctx: Context = {
      out,
      positionals: parsed.positionals,
      values: parsed.values as Context["values"],
      cwd: io.cwd,
      env: io.env,
      signal: io.signal,
      settings() {
        settings ??= resolveSettings({
          flags: { url: parsed.values.url as string | undefined, profile: parsed.values.profile as string | undefined },
          env: io.env,
          cwd: io.cwd,
        });
        return settings;
      },
      relay() {
        const { url, apiKey } = ctx.settings();
        client ??= createRelayClient({ url, apiKey, headers: { "User-Agent": `relay-cli/${VERSION}` } });
        return client;
      },
      readLine: (prompt) => reader.read(prompt),
      claimInterrupt: (handler) => io.interrupts?.claim(handler) ?? (() => undefined),
      readSecret: (prompt) => readSecret({ stdin: io.stdin, prompt: io.stderr, signal: io.signal }, prompt),
    };
    return (await command.run(ctx)) ?? EXIT.OK;
  } catch (error) {
    if (io.signal.aborted) return EXIT.OK;
    return fail(error, argv, io.stderr);
  } finally {
    reader.close();
  }
}

/**
 * Says a failure on stderr, as a coded line or (when the command line has `--json`) one JSON
 * object, and answers its exit code. `main` ends with it; client/bin/relay.js also calls it
 * for whatever escapes `main` (an error thrown in an event listener), so no stack is printed.
 */
export function fail(error: unknown, argv: readonly string[], stderr: Io["stderr"]): ExitCode {
  const cli = cliErrorOf(error);
  stderr.write(failureOutput(cli, argv.includes("--json")));
  return cli.exitCode;
}
