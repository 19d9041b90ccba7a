import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CliError } from "../../client/src/cli/exit.ts";
import { resolveSettings, type SettingsInput, sameOrigin } from "../../client/src/cli/settings.ts";
import { tempDir } from "./run-cli";

/** Where the URL and key come from, and that a key goes only to the URL it was given for. */

const PROD = "https://relay.example.com";
const LOCAL = "http://127.0.0.1:8787";
const OTHER = "https://other.example.net";

/** A config file with a default profile and the profiles named, in a folder of its own (no .dev.vars above it). */
function setup(file: object = {}) {
  const dir = tempDir();
  const RELAY_CONFIG = join(dir, "config.json");
  writeFileSync(
    RELAY_CONFIG,
    JSON.stringify({
      profiles: {
        prod: { url: PROD, api_key_env: "PROD_KEY" },
        local: { url: LOCAL, api_key: "local-key" },
        bare: { api_key: "bare-key" },
      },
      ...file,
    }),
  );
  return {
    resolve: (flags: SettingsInput["flags"], env: SettingsInput["env"] = {}) =>
      resolveSettings({ flags, env: { RELAY_CONFIG, PROD_KEY: "prod-key", ...env }, cwd: dir }),
  };
}

/** The failure `run` throws: its code, exit code and message. */
function failure(run: () => unknown): CliError {
  try {
    run();
  } catch (error) {
    if (error instanceof CliError) return error;
    throw error;
  }
  throw new Error("expected a CliError, and nothing was thrown");
}

describe("sameOrigin", () => {
  it("compares scheme, host and port, after a trailing slash, a path, default ports and case", () => {
    expect(sameOrigin(PROD, `${PROD}/`)).toBe(true);
    expect(sameOrigin(PROD, "https://relay.example.com:443/v1")).toBe(true);
    expect(sameOrigin("HTTPS://Relay.Example.COM", PROD)).toBe(true);
    expect(sameOrigin("http://relay.internal:80/", "http://relay.internal")).toBe(true);
    expect(sameOrigin(PROD, "http://relay.example.com")).toBe(false);
    expect(sameOrigin(PROD, "https://relay.example.com:8443")).toBe(false);
    expect(sameOrigin(PROD, "https://relay.example.com.evil.net")).toBe(false);
    expect(sameOrigin("http://127.0.0.1:8787", "http://localhost:8787")).toBe(false);
    expect(sameOrigin("relay.example.com", PROD)).toBe(false);
  });
});

describe("resolveSettings: which URL", () => {
  it("--profile, then RELAY_URL and RELAY_API_KEY, then the default profile", () => {
    const { resolve } = setup({ default_profile: "local" });
    const env = { RELAY_URL: "http://10.0.0.1:1", RELAY_API_KEY: "env-key" };
    expect(resolve({ profile: "prod" }, env)).toMatchObject({ url: PROD, apiKey: "prod-key" });
    expect(resolve({}, env)).toMatchObject({ url: "http://10.0.0.1:1", apiKey: "env-key" });
    expect(resolve({})).toMatchObject({ url: LOCAL, apiKey: "local-key" });
    expect(resolve({}, { RELAY_PROFILE: "prod" })).toMatchObject({ url: PROD, apiKey: "prod-key" });
  });
});

describe("resolveSettings: a profile's key goes only to the profile's URL", () => {
  it("a profile alone, named or the default: its URL and its key", () => {
    expect(setup().resolve({ profile: "prod" })).toMatchObject({ url: PROD, apiKey: "prod-key" });
    expect(setup({ default_profile: "prod" }).resolve({})).toMatchObject({ url: PROD, apiKey: "prod-key" });
  });

  it("RELAY_URL or --url the profile's own (however written): the profile's key", () => {
    const { resolve } = setup({ default_profile: "prod" });
    for (const same of [`${PROD}/`, "https://relay.example.com:443", "HTTPS://RELAY.example.com/v1/"]) {
      expect(resolve({}, { RELAY_URL: same })).toMatchObject({ url: same, apiKey: "prod-key" });
      expect(resolve({ url: same, profile: "prod" })).toMatchObject({ url: same, apiKey: "prod-key" });
    }
  });

  it("another RELAY_URL with its own RELAY_API_KEY: that key, never the profile's", () => {
    const { resolve } = setup({ default_profile: "prod" });
    expect(resolve({}, { RELAY_URL: OTHER, RELAY_API_KEY: "other-key" })).toMatchObject({
      url: OTHER,
      apiKey: "other-key",
      keySource: "RELAY_API_KEY",
    });
    // --url with RELAY_API_KEY and no RELAY_URL: the key given for this command.
    expect(resolve({ url: OTHER, profile: "prod" }, { RELAY_API_KEY: "other-key" })).toMatchObject({
      url: OTHER,
      apiKey: "other-key",
    });
  });

  it("another RELAY_URL without a key of its own: KEY_NOT_FOR_URL, saying whose key was held back", () => {
    const { resolve } = setup({ default_profile: "prod" });
    const error = failure(() => resolve({}, { RELAY_URL: OTHER }));
    expect(error.code).toBe("KEY_NOT_FOR_URL");
    expect(error.exitCode).toBe(2);
    expect(error.message).toBe(
      `no API key for ${OTHER}, and no other is sent there: profile "prod"'s key is for ${PROD}. Give ${OTHER} its own key: RELAY_API_KEY (with RELAY_URL unset or set to it), or a profile whose url it is (docs/cli.md, Which key goes where)`,
    );
    // The same with the profile named and --url.
    expect(failure(() => resolve({ url: OTHER, profile: "prod" })).code).toBe("KEY_NOT_FOR_URL");
    // Another port or scheme of the same host is another Relay.
    expect(failure(() => resolve({}, { RELAY_URL: "https://relay.example.com:8443" })).code).toBe("KEY_NOT_FOR_URL");
    expect(failure(() => resolve({}, { RELAY_URL: "http://relay.example.com" })).code).toBe("KEY_NOT_FOR_URL");
  });

  it("RELAY_API_KEY goes only to RELAY_URL when that is set", () => {
    const { resolve } = setup();
    const env = { RELAY_URL: LOCAL, RELAY_API_KEY: "local-env-key" };
    const error = failure(() => resolve({ url: OTHER }, env));
    expect(error.code).toBe("KEY_NOT_FOR_URL");
    expect(error.message).toContain(`RELAY_API_KEY is for RELAY_URL ${LOCAL}`);
    // A profile whose key is not set does not borrow it either.
    expect(failure(() => resolve({ profile: "prod" }, { ...env, PROD_KEY: undefined })).message).toContain(
      `RELAY_API_KEY is for RELAY_URL ${LOCAL}`,
    );
    expect(resolve({ url: `${LOCAL}/` }, env)).toMatchObject({ apiKey: "local-env-key" });
  });

  it("a profile without a url is for the default URL: its key goes nowhere else", () => {
    const { resolve } = setup();
    expect(resolve({ profile: "bare" })).toMatchObject({ url: LOCAL, apiKey: "bare-key" });
    const error = failure(() => resolve({ profile: "bare" }, { RELAY_URL: OTHER }));
    expect(error.code).toBe("KEY_NOT_FOR_URL");
    expect(error.message).toContain(`profile "bare"'s key is for ${LOCAL}`);
  });
});

describe("resolveSettings: the dev default", () => {
  it("with nothing set, a Relay on this machine uses the first key of the nearest .dev.vars", () => {
    const repo = tempDir();
    writeFileSync(join(repo, ".dev.vars"), 'RELAY_API_KEYS="dev:relay-dev-key,acme:acme-dev-key"\n');
    mkdirSync(join(repo, "sub"));
    const env = { RELAY_CONFIG: join(repo, "none.json") };
    expect(resolveSettings({ flags: {}, env, cwd: join(repo, "sub") })).toMatchObject({
      url: LOCAL,
      apiKey: "relay-dev-key",
    });
    // Any port of this machine (npm run dev -- --port 8790), never another host.
    expect(
      resolveSettings({ flags: {}, env: { ...env, RELAY_URL: "http://127.0.0.1:8790" }, cwd: repo }),
    ).toMatchObject({ apiKey: "relay-dev-key" });
    const elsewhere = failure(() => resolveSettings({ flags: { url: PROD }, env, cwd: repo }));
    expect(elsewhere.code).toBe("NO_API_KEY");
    expect(elsewhere.exitCode).toBe(2);
  });

  it("with nothing set and no .dev.vars: NO_API_KEY", () => {
    const dir = tempDir();
    const error = failure(() =>
      resolveSettings({ flags: {}, env: { RELAY_CONFIG: join(dir, "none.json") }, cwd: dir }),
    );
    expect(error.code).toBe("NO_API_KEY");
    expect(error.message).toMatch(/^no API key for http:\/\/127\.0\.0\.1:8787: set RELAY_API_KEY/);
  });
});
