import { execFile } from "node:child_process";
import { Readable } from "node:stream";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { main } from "../../client/src/cli/main.ts";
import { cliEnv, hasStack, ROOT, relay, tempDir, UNREACHABLE_URL } from "./run-cli";

/** Bad input is one line on stderr and an exit code a script can branch on, never a stack. */

function oneLine(stderr: string): string {
  expect(hasStack(stderr)).toBe(false);
  const lines = stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe("relay: bad input", () => {
  it("an unknown command: exit 2", async () => {
    const ran = await relay(["frobnicate"]);
    expect(ran.code).toBe(2);
    expect(oneLine(ran.stderr)).toBe('relay: USAGE: unknown command "frobnicate"; relay help lists them');
    expect(ran.stdout).toBe("");
  });

  it("an unknown option: exit 2, with the command's usage", async () => {
    const ran = await relay(["route", "hello", "--strateg", "rule"]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(/^relay: USAGE: Unknown option '--strateg'/);
    expect(ran.stderr).toContain("relay route <text…>");
    expect(hasStack(ran.stderr)).toBe(false);
  });

  it("a missing argument: exit 2", async () => {
    const ran = await relay(["agents", "get"]);
    expect(ran.code).toBe(2);
    expect(oneLine(ran.stderr)).toBe("relay: USAGE: agents get takes one name");
  });

  it("no key anywhere: exit 2, saying where a key can come from", async () => {
    // A folder with no .dev.vars above it, and neither RELAY_API_KEY nor a config file.
    const ran = await relay(["agents", "ls"], { env: { RELAY_API_KEY: undefined }, cwd: tempDir() });
    expect(ran.code).toBe(2);
    expect(oneLine(ran.stderr)).toMatch(
      /^relay: NO_API_KEY: no API key for http:\/\/127\.0\.0\.1:\d+: set RELAY_API_KEY/,
    );
  });

  it("a wrong key: the API's code and message, exit 1", async () => {
    const ran = await relay(["agents", "ls"], { env: { RELAY_API_KEY: "not-a-key-of-this-relay" } });
    expect(ran.code).toBe(1);
    expect(oneLine(ran.stderr)).toMatch(/^relay: UNAUTHORIZED: .+ \(HTTP 401\)$/);
  });

  it("an unreachable URL: exit 3", async () => {
    const ran = await relay(["route", "hello"], { env: { RELAY_URL: UNREACHABLE_URL } });
    expect(ran.code).toBe(3);
    expect(oneLine(ran.stderr)).toBe(`relay: UNREACHABLE: cannot reach ${UNREACHABLE_URL} (ECONNREFUSED)`);
  });

  it("a URL that is not one: exit 2", async () => {
    const ran = await relay(["route", "hello", "--url", "relay.example"]);
    expect(ran.code).toBe(2);
    expect(oneLine(ran.stderr)).toBe('relay: USAGE: not an http(s) URL: "relay.example" (set --url or RELAY_URL)');
  });

  it("a 404 from the API: its code and message, exit 4", async () => {
    const ran = await relay(["agents", "get", "nobody-by-this-name"]);
    expect(ran.code).toBe(4);
    expect(oneLine(ran.stderr)).toBe("relay: AGENT_NOT_FOUND: No agent named 'nobody-by-this-name'. (HTTP 404)");
    expect(ran.stdout).toBe("");
  });

  it("a 400 from the API: the code, the message and the first issues on the same line, exit 1", async () => {
    const ran = await relay(["config", "routing.threshold", "700"]);
    expect(ran.code).toBe(1);
    expect(oneLine(ran.stderr)).toMatch(/^relay: VALIDATION_FAILED: .+\(threshold: .+\) \(HTTP 400\)$/);
  });

  it("with --json, the error is one JSON object on stderr", async () => {
    const ran = await relay(["agents", "get", "nobody-by-this-name", "--json"]);
    expect(ran.code).toBe(4);
    const error = JSON.parse(oneLine(ran.stderr));
    expect(error).toEqual({
      error: {
        code: "AGENT_NOT_FOUND",
        message: "No agent named 'nobody-by-this-name'.",
        details: { agent: "nobody-by-this-name" },
      },
    });
  });

  it("a profile the config file does not have: exit 2", async () => {
    const ran = await relay(["agents", "ls", "--profile", "staging"]);
    expect(ran.code).toBe(2);
    expect(oneLine(ran.stderr)).toMatch(/^relay: USAGE: no profile "staging" in /);
  });

  it("`npx relay` runs the command from the repository (the workspace's bin)", async () => {
    const { stdout } = await promisify(execFile)("npx", ["--no-install", "relay", "--version"], {
      cwd: ROOT,
      env: cliEnv(),
    });
    expect(stdout.trim()).toBe("0.1.0");
  });
});

describe("relay: a bug in the command", () => {
  /** `relay <args>` in this process, with a stdout that fails as a closed pipe can. */
  async function withBrokenStdout(args: string[]) {
    let stderr = "";
    const code = await main(args, {
      stdin: Readable.from([]),
      stdout: {
        write() {
          throw new TypeError("Cannot read properties of undefined (reading 'write')");
        },
      },
      stderr: { write: (text: string) => (stderr += text) },
      env: cliEnv(),
      cwd: ROOT,
      signal: new AbortController().signal,
    });
    return { code, stderr };
  }

  it("is one coded line, UNEXPECTED, exit 6, not a stack", async () => {
    const ran = await withBrokenStdout(["help"]);
    expect(ran.code).toBe(6);
    expect(oneLine(ran.stderr)).toBe(
      "relay: UNEXPECTED: TypeError: Cannot read properties of undefined (reading 'write') (a bug in relay: please report it with the command that led to it)",
    );
  });

  it("with --json, one JSON object", async () => {
    const ran = await withBrokenStdout(["help", "--json"]);
    expect(ran.code).toBe(6);
    expect(JSON.parse(oneLine(ran.stderr))).toEqual({
      error: {
        code: "UNEXPECTED",
        message:
          "TypeError: Cannot read properties of undefined (reading 'write') (a bug in relay: please report it with the command that led to it)",
      },
    });
  });
});
