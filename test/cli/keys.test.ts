import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { answers, type FakeServer, fakeServer } from "./fake-server";
import { relay, tempDir } from "./run-cli";

/**
 * A profile's key goes only to its own URL: pointed elsewhere by RELAY_URL or --url, the command
 * sends that other server nothing unless it was given a key of its own (docs/cli.md, Which key
 * goes where). The other server is a fake that records what reached it.
 */

const AGENTS = answers.json(200, { items: [], next_cursor: null });

let other: FakeServer;
let RELAY_CONFIG: string;
beforeAll(async () => {
  other = await fakeServer(AGENTS);
  const dir = tempDir();
  RELAY_CONFIG = join(dir, "config.json");
  // The suite's Relay and its real key, as a default profile.
  writeFileSync(
    RELAY_CONFIG,
    JSON.stringify({
      default_profile: "suite",
      profiles: { suite: { url: inject("relayUrl"), api_key: inject("relayKey") } },
    }),
  );
});
afterAll(() => other.close());

/** `relay agents ls` with the config file and only the variables given. */
const ls = (env: Record<string, string>, args: string[] = []) =>
  relay(["agents", "ls", ...args], {
    env: { RELAY_CONFIG, RELAY_URL: undefined, RELAY_API_KEY: undefined, ...env },
    cwd: tempDir(),
  });

describe("which key goes where", () => {
  it("the profile alone: its URL and its key", async () => {
    const ran = await ls({});
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/billing\s+llm/);
  });

  it("RELAY_URL the profile's own, written another way: the profile's key", async () => {
    const ran = await ls({ RELAY_URL: `${inject("relayUrl")}/` });
    expect(ran.code).toBe(0);
  });

  it("RELAY_URL elsewhere, without a key of its own: refused before anything is sent", async () => {
    const before = other.seen.length;
    for (const ran of [await ls({ RELAY_URL: other.url }), await ls({}, ["--url", other.url])]) {
      expect(ran.code).toBe(2);
      expect(ran.stderr).toBe(
        `relay: KEY_NOT_FOR_URL: no API key for ${other.url}, and no other is sent there: profile "suite"'s key is for ${inject("relayUrl")}. Give ${other.url} its own key: RELAY_API_KEY (with RELAY_URL unset or set to it), or a profile whose url it is (docs/cli.md, Which key goes where)\n`,
      );
    }
    expect(other.seen.slice(before)).toEqual([]);
  });

  it("--json: the same refusal as one JSON object", async () => {
    const ran = await ls({ RELAY_URL: other.url }, ["--json"]);
    expect(ran.code).toBe(2);
    expect(JSON.parse(ran.stderr)).toMatchObject({ error: { code: "KEY_NOT_FOR_URL" } });
  });

  it("RELAY_URL elsewhere with its own RELAY_API_KEY: only that key reaches it", async () => {
    const before = other.seen.length;
    const ran = await ls({ RELAY_URL: other.url, RELAY_API_KEY: "other-key" });
    expect(ran.code).toBe(0);
    expect(other.seen.slice(before).map((s) => [s.path, s.authorization])).toEqual([
      ["/v1/agents?limit=200", "Bearer other-key"],
    ]);
  });

  it("a redirect to another origin does not carry the key there", async () => {
    const redirecting = await fakeServer((_req, res) =>
      res.writeHead(307, { Location: `${other.url}/v1/agents?limit=200` }).end(),
    );
    try {
      const before = other.seen.length;
      const ran = await ls({ RELAY_URL: redirecting.url, RELAY_API_KEY: "redirecting-key" });
      expect(ran.code).toBe(0);
      expect(redirecting.seen.map((s) => s.authorization)).toEqual(["Bearer redirecting-key"]);
      expect(other.seen.slice(before).map((s) => s.authorization)).toEqual([undefined]);
    } finally {
      await redirecting.close();
    }
  });

  it("RELAY_API_KEY given for one RELAY_URL does not follow --url to another", async () => {
    const before = other.seen.length;
    const ran = await ls({ RELAY_URL: inject("relayUrl"), RELAY_API_KEY: inject("relayKey") }, ["--url", other.url]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain(`RELAY_API_KEY is for RELAY_URL ${inject("relayUrl")}`);
    expect(other.seen.slice(before)).toEqual([]);
  });
});
