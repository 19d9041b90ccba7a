import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import { createRelayClient, type MessageRun, type RelayClient, unwrap } from "../../client/src/index.ts";

/** Running the `relay` command as a process, the way a script or a person does. */

export const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "client", "bin", "relay.js");

/** A port in this suite's range where nothing listens. */
export const UNREACHABLE_URL = "http://127.0.0.1:8858";

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Standard input, written at once and then closed. */
  input?: string;
  /** Variables on top of a clean environment (no RELAY_* from the caller's shell). */
  env?: Record<string, string | undefined>;
  cwd?: string;
}

/** The environment a test's command sees: the suite's Relay and key, no config file, no colour. */
export function cliEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("RELAY_")));
  const env: NodeJS.ProcessEnv = {
    ...clean,
    RELAY_URL: inject("relayUrl"),
    RELAY_API_KEY: inject("relayKey"),
    RELAY_CONFIG: join(tmpdir(), "relay-cli-tests-no-config.json"),
    NO_COLOR: "1",
  };
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** Starts `relay <args>`; the caller reads and ends it. */
export function startRelay(args: string[], options: RunOptions = {}): ChildProcess {
  return spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: cliEnv(options.env),
    stdio: ["pipe", "pipe", "pipe"],
  });
}

/** Runs `relay <args>` to its end. */
export function relay(args: string[], options: RunOptions = {}): Promise<Ran> {
  const child = startRelay(args, options);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk) => (stdout += chunk));
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  child.stdin!.end(options.input ?? "");
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Everything a stream has written so far, and a wait for text in it (the test's own timeout bounds the wait). */
export function collect(stream: NodeJS.ReadableStream): { text(): string; waitFor(pattern: RegExp): Promise<string> } {
  let seen = "";
  const waiters: { pattern: RegExp; resolve: (text: string) => void }[] = [];
  stream.on("data", (chunk: Buffer) => {
    seen += chunk;
    for (const waiter of [...waiters])
      if (waiter.pattern.test(seen)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(seen);
      }
  });
  return {
    text: () => seen,
    waitFor: (pattern) =>
      pattern.test(seen) ? Promise.resolve(seen) : new Promise((resolve) => waiters.push({ pattern, resolve })),
  };
}

/** The typed client on the suite's Relay. */
export function testClient(): RelayClient {
  return createRelayClient({ url: inject("relayUrl"), apiKey: inject("relayKey") });
}

/** A folder of its own for a test. */
export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "relay-cli-test-"));
}

/** Calls `check` until it returns a value (not undefined); the lists that read D1 follow by about half a second. */
export async function eventually<T>(check: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export interface Received {
  headers: IncomingMessage["headers"];
  body: string;
  path: string;
}

/**
 * An HTTP receiver on loopback standing in for a tenant's service (an http tool, an events
 * URL): it records each request and answers `reply`.
 */
export async function receiver(port: number, reply: (r: Received) => string = () => "ok") {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const r = { headers: req.headers, body, path: req.url ?? "" };
      received.push(r);
      res.writeHead(200, { "Content-Type": "text/plain" }).end(reply(r));
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** True when `text` shows a stack trace. */
export function hasStack(text: string): boolean {
  return /^\s+at\s/m.test(text);
}

/** A user message and the run it started (the answer is 200 or 202 with `{ message, run }` for a user message). */
export async function runMessage(relayClient: RelayClient, sessionId: string, content: string): Promise<MessageRun> {
  const answer = await unwrap(
    relayClient.api.POST("/v1/sessions/{id}/messages", {
      params: { path: { id: sessionId } },
      body: { role: "user", content },
    }),
  );
  return answer as MessageRun;
}
