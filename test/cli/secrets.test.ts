import { PassThrough } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { readSecret } from "../../client/src/cli/read-secret.ts";
import { relay, testClient } from "./run-cli";

/**
 * `relay secrets` against `wrangler dev`: values go in from standard input or a silent prompt,
 * never from the command line, and never come back out on stdout or stderr.
 */

const client = testClient();
const VALUE = "Bearer cli-secret-value-41d7";

afterAll(async () => {
  await client.api.DELETE("/v1/agents/{name}", { params: { path: { name: "cli-vault-user" } } });
  for (const name of ["cli-token", "cli-used"])
    await client.api.DELETE("/v1/secrets/{name}", { params: { path: { name } } });
});

describe("relay secrets", () => {
  it("set reads the value from a pipe; ls shows names and users, never values; a second set replaces", async () => {
    const stored = await relay(["secrets", "set", "cli-token"], { input: `${VALUE}\n` });
    expect(stored).toMatchObject({ code: 0, stdout: "stored cli-token\n" });
    const replaced = await relay(["secrets", "set", "cli-token", "--json"], { input: `${VALUE}-2` });
    expect(replaced.code).toBe(0);
    expect(JSON.parse(replaced.stdout)).toMatchObject({ name: "cli-token", rotated_at: expect.any(String) });
    const listed = await relay(["secrets", "ls"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^name\s+stored\s+replaced\s+used by\n/);
    expect(listed.stdout).toMatch(/\ncli-token\s+\S+ \S+\s+\S+ \S+\s+-\n/);
    const json = await relay(["secrets", "ls", "--json"]);
    expect(JSON.parse(json.stdout).map((s: { name: string }) => s.name)).toContain("cli-token");
    for (const ran of [stored, replaced, listed, json])
      expect(ran.stdout + ran.stderr).not.toContain("cli-secret-value");
  });

  it("refuses a value on the command line, sending nothing", async () => {
    const ran = await relay(["secrets", "set", "cli-argv", VALUE]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain("never from the command line");
    expect(ran.stderr).not.toContain("cli-secret-value");
    const found = await client.api.GET("/v1/secrets/{name}", { params: { path: { name: "cli-argv" } } });
    expect(found.response.status).toBe(404);
  });

  it("refuses an empty value, and answers the API's refusal of a bad one without quoting it", async () => {
    expect((await relay(["secrets", "set", "cli-empty"], { input: "" })).code).toBe(2);
    const bad = await relay(["secrets", "set", "cli-bad", "--json"], { input: "cli-secret-value\r\nX: 1\n" });
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr)).toMatchObject({ error: { code: "VALIDATION_FAILED" } });
    expect(bad.stderr).not.toContain("cli-secret-value");
  });

  it("rm deletes; a secret in use is kept (exit 1, SECRET_IN_USE); one of nothing is exit 4", async () => {
    await relay(["secrets", "set", "cli-used"], { input: VALUE });
    await client.api.PUT("/v1/agents/{name}", {
      params: { path: { name: "cli-vault-user" } },
      body: {
        name: "cli-vault-user",
        kind: "webhook",
        endpoint: "http://127.0.0.1:9/x",
        headers: { "X-Key": "cli-used" },
      },
    });
    const inUse = await relay(["secrets", "rm", "cli-used"]);
    expect(inUse.code).toBe(1);
    expect(inUse.stderr).toContain("SECRET_IN_USE");
    expect(inUse.stderr).toContain("agent 'cli-vault-user'");
    expect((await relay(["secrets", "rm", "cli-token"])).stdout).toBe("deleted cli-token\n");
    expect((await relay(["secrets", "rm", "cli-token"])).code).toBe(4);
  });
});

describe("the silent prompt", () => {
  /** A terminal stand-in: typed keys come in raw, and nothing is echoed but the prompt. */
  function terminal() {
    const stdin = Object.assign(new PassThrough(), {
      isTTY: true,
      raw: false,
      setRawMode(on: boolean) {
        stdin.raw = on;
      },
    });
    let shown = "";
    return { stdin, prompt: { write: (text: string) => (shown += text) }, shown: () => shown };
  }

  it("reads typed keys without echoing them, with backspace, and leaves raw mode", async () => {
    const tty = terminal();
    const reading = readSecret({ ...tty, signal: new AbortController().signal }, "value: ");
    expect(tty.stdin.raw).toBe(true);
    tty.stdin.write("s3cret-typ");
    tty.stdin.write("x\u007fed\r");
    expect(await reading).toBe("s3cret-typed");
    expect(tty.shown()).toBe("value: \n");
    expect(tty.stdin.raw).toBe(false);
  });

  it("gives nothing on Ctrl-C", async () => {
    const tty = terminal();
    const reading = readSecret({ ...tty, signal: new AbortController().signal }, "value: ");
    tty.stdin.write("half\u0003");
    expect(await reading).toBeNull();
  });
});
