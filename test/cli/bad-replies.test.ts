import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasStack, relay } from "./run-cli";

/**
 * Whatever answers at the URL — a proxy's HTML page, JSON of another shape, a 500, a dropped
 * connection — `relay` ends with one coded line on stderr (one JSON object under --json) and a
 * non-zero exit, never a stack trace. The server here is not Relay: it answers each path badly.
 */

let server: Server;
let url: string;

/** Path → how the server answers it. */
const ANSWERS: Record<string, (res: import("node:http").ServerResponse) => void> = {
  "/v1/agents": (res) => res.writeHead(200, { "Content-Type": "application/json" }).end('{"items":5}'),
  "/v1/audit": (res) => res.writeHead(200, { "Content-Type": "text/html" }).end("<html>a login page</html>"),
  "/v1/inbox": (res) => res.writeHead(500, { "Content-Type": "text/html" }).end("<h1>Bad gateway</h1>"),
  "/v1/route": (res) => res.writeHead(200, { "Content-Type": "application/json" }).end("[]"),
  "/v1/agents/empty": (res) => res.writeHead(200, { "Content-Type": "application/json" }).end("{}"),
  "/v1/config/routing": (res) => res.destroy(),
  "/v1/secrets": (res) =>
    res.writeHead(200, { "Content-Type": "application/json" }).end('{"items":[],"next_cursor":7}'),
  "/v1/sessions": (res) => res.writeHead(201, { "Content-Type": "application/json" }).end("[1,2,3]"),
  "/v1/sessions/ses_x": (res) => res.writeHead(200, { "Content-Type": "application/json" }).end('{"id":null}'),
  "/v1/inbox/inb_x": (res) => res.writeHead(200, { "Content-Type": "application/json" }).end('"a string"'),
};

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    const path = (req.url ?? "").split("?")[0]!;
    (ANSWERS[path] ?? ((r) => r.writeHead(200, { "Content-Type": "application/json" }).end("null")))(res);
  });
  // A port of the system's choosing: nothing else's.
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const env = () => ({ RELAY_URL: url, RELAY_API_KEY: "any-key" });

const COMMANDS: [string, string[], string][] = [
  ["a list of the wrong shape", ["agents", "ls"], "BAD_REPLY"],
  ["an HTML page for JSON", ["audit"], "BAD_REPLY"],
  ["a 500 with HTML", ["inbox", "ls"], "HTTP_500"],
  ["an array for a decision", ["route", "hello"], "BAD_REPLY"],
  ["a dropped connection", ["config"], "UNREACHABLE"],
  ["a page whose cursor is a number", ["secrets", "ls"], "BAD_REPLY"],
  ["an array for a session", ["chat", "--agent", "billing"], "BAD_REPLY"],
  ["a session of nothing to follow", ["tail", "ses_x"], "UNREACHABLE"],
  ["a string for an inbox item", ["inbox", "show", "inb_x"], "BAD_REPLY"],
];

describe("relay against a server that answers badly", () => {
  it.each(COMMANDS)("%s: one coded line, never a stack", async (_, args, code) => {
    const ran = await relay(args, { env: env(), input: "hello\n/quit\n" });
    expect(ran.code, ran.stderr).not.toBe(0);
    expect(hasStack(ran.stderr)).toBe(false);
    const lines = ran.stderr.trimEnd().split("\n");
    expect(lines.at(-1)).toMatch(/^relay: /);
    const json = await relay([...args, "--json"], { env: env(), input: "hello\n/quit\n" });
    expect(hasStack(json.stderr)).toBe(false);
    const error = JSON.parse(json.stderr.trimEnd().split("\n").at(-1)!);
    expect(error.error.code).toBe(code);
    expect(error.error.message).toEqual(expect.any(String));
  });

  it("an object without the fields a command reads: UNEXPECTED, one line, no stack", async () => {
    const ran = await relay(["agents", "get", "empty"], { env: env() });
    expect(ran.code).toBe(1);
    expect(hasStack(ran.stderr)).toBe(false);
    expect(ran.stderr).toMatch(
      /^relay: relay could not finish: .+ \(an answer it did not expect, or a bug in relay\)\n$/,
    );
  });
});
