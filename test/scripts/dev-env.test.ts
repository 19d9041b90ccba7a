/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import devVarsExample from "../../.dev.vars.example?raw";
import {
  apiKeysInDevVars,
  appliedMigrations,
  devAddress,
  devRelayHosts,
  devUrl,
  devVar,
  devWranglerEnv,
  listed,
  localEndpointsInDevVars,
  newVaultKey,
  octal,
  relayHostsInArgs,
  setupSummary,
  tenantsOf,
  VAULT_KEY_VAR,
  withVaultKey,
} from "../../scripts/lib/dev-env";
import { parseApiKeys } from "../../src/auth/api-keys";
import { isRelayHost, parseRelayHosts } from "../../src/outbound/policy";
import wranglerToml from "../../wrangler.toml?raw";

describe("the environment wrangler runs with in dev", () => {
  it("turns the Request.cf fetch and metrics off by default, keeping everything else", () => {
    const env = devWranglerEnv({ PATH: "/bin", HOME: "/home/me" });
    expect(env).toEqual({
      PATH: "/bin",
      HOME: "/home/me",
      CLOUDFLARE_CF_FETCH_ENABLED: "false",
      WRANGLER_SEND_METRICS: "false",
    });
  });

  it("leaves a value the user set alone, and adds CI only for the non-interactive setup commands", () => {
    const env = devWranglerEnv(
      { CLOUDFLARE_CF_FETCH_ENABLED: "true", WRANGLER_SEND_METRICS: "true" },
      { nonInteractive: true },
    );
    expect(env).toEqual({ CLOUDFLARE_CF_FETCH_ENABLED: "true", WRANGLER_SEND_METRICS: "true", CI: "true" });
  });
});

describe("what the dev setup reads", () => {
  it("finds the two dev tenants and their keys in the shipped .dev.vars.example", () => {
    const keys = parseApiKeys(apiKeysInDevVars(devVarsExample));
    expect(keys).toEqual([
      { tenant: "dev", key: "relay-dev-key" },
      { tenant: "acme", key: "acme-dev-key" },
    ]);
    expect(tenantsOf(keys)).toEqual(["dev", "acme"]);
  });

  it("reads RELAY_API_KEYS quoted or not, and finds none in a file without it", () => {
    expect(apiKeysInDevVars("# keys\nOTHER=1\nRELAY_API_KEYS=a:aaaaaaaa\n")).toBe("a:aaaaaaaa");
    expect(apiKeysInDevVars('RELAY_API_KEYS = "a:aaaaaaaa, b:bbbbbbbb"\n')).toBe("a:aaaaaaaa, b:bbbbbbbb");
    expect(apiKeysInDevVars("# RELAY_API_KEYS is not set here\nOTHER=1\n")).toBe("");
  });

  it("names each tenant once, and only tenants whose keys the Worker accepts", () => {
    expect(tenantsOf(parseApiKeys("dev:relay-dev-key,dev:another-key,short:abc,acme:acme-dev-key"))).toEqual([
      "dev",
      "acme",
    ]);
  });

  it("lets npm run dev call local endpoints, with wrangler dev's own address still refused; wrangler.toml never switches it on", () => {
    expect(localEndpointsInDevVars(devVarsExample)).toBe(true);
    const hosts = devRelayHosts(devAddress(wranglerToml), [devVar(devVarsExample, "RELAY_HOSTS")]);
    expect(hosts).toBe("127.0.0.1:8787");
    expect(isRelayHost(new URL(`${devUrl(wranglerToml)}/health`), parseRelayHosts(hosts))).toBe(true);
    expect(isRelayHost(new URL("http://localhost:8787/v1/webhooks/demo"), parseRelayHosts(hosts))).toBe(true);
    expect(isRelayHost(new URL("http://127.0.0.1:9000/agent"), parseRelayHosts(hosts))).toBe(false);
    expect(wranglerToml).not.toMatch(/RELAY_ALLOW_LOCAL_ENDPOINTS/);
  });

  it("reads a variable as wrangler's dotenv parser does: quoted or not, comments off, the last assignment winning", () => {
    expect(devVar("A=\"x # y\"\nB=plain # note\nC='single'\n", "A")).toBe("x # y");
    expect(devVar("A=\"x # y\"\nB=plain # note\nC='single'\n", "B")).toBe("plain");
    expect(devVar("A=\"x # y\"\nB=plain # note\nC='single'\n", "C")).toBe("single");
    expect(devVar("export D = 1\nD=2\n", "D")).toBe("2");
    expect(devVar("# E=1\nEE=2\n", "E")).toBeUndefined();
    expect(devVar('F=""\n', "F")).toBe("");
    // An empty value does not take the next line for its own.
    expect(devVar("RELAY_API_KEYS=\nOTHER=a:aaaaaaaa\n", "RELAY_API_KEYS")).toBe("");
  });

  it("reads the local switch only when it is true", () => {
    expect(localEndpointsInDevVars('RELAY_ALLOW_LOCAL_ENDPOINTS="true"\n')).toBe(true);
    expect(localEndpointsInDevVars("RELAY_ALLOW_LOCAL_ENDPOINTS = TRUE\n")).toBe(true);
    expect(localEndpointsInDevVars('RELAY_ALLOW_LOCAL_ENDPOINTS="false"\n')).toBe(false);
    expect(localEndpointsInDevVars('# RELAY_ALLOW_LOCAL_ENDPOINTS="true"\nRELAY_API_KEYS=a:aaaaaaaa\n')).toBe(false);
  });

  it("tells the migrations applied from the apply output, none when it had nothing to do", () => {
    const files = ["0001_create_registry.sql", "0002_create_audit.sql", "0003_index_handoff_history.sql"];
    const output =
      "Migrations to be applied:\n│ 0003_index_handoff_history.sql │\n🚣 4 commands executed successfully.";
    expect(appliedMigrations(output, files)).toEqual(["0003_index_handoff_history.sql"]);
    expect(appliedMigrations("✅ No migrations to apply!", files)).toEqual([]);
  });

  it("takes the dev URL from wrangler.toml's [dev] table, and wrangler's defaults without one", () => {
    expect(devUrl(wranglerToml)).toBe("http://127.0.0.1:8787");
    expect(devUrl('name = "x"\n[vars]\nport = 1\n')).toBe("http://localhost:8787");
    expect(devUrl('[dev]\nport = 9000\nlocal_protocol = "https"\n[vars]\nip = "10.0.0.1"\n')).toBe(
      "https://localhost:9000",
    );
  });

  it("takes the address from the arguments after -- first, in either spelling, the last one winning", () => {
    expect(devAddress(wranglerToml, ["--port", "8797"])).toEqual({ protocol: "http", ip: "127.0.0.1", port: "8797" });
    expect(devAddress(wranglerToml, ["--ip=localhost", "--port=8790", "--port", "8791"])).toEqual({
      protocol: "http",
      ip: "localhost",
      port: "8791",
    });
    expect(devUrl(wranglerToml, ["--local-protocol", "https", "--ip", "::1"])).toBe("https://[::1]:8787");
    expect(devUrl(wranglerToml, ["--ip", "0.0.0.0", "--port", "9000"])).toBe("http://127.0.0.1:9000");
    expect(devUrl('name = "x"\n', ["--port", "8797"])).toBe("http://localhost:8797");
  });
});

describe("RELAY_HOSTS under wrangler dev", () => {
  const hostsFor = (args: string[], listed: (string | undefined)[] = []) =>
    devRelayHosts(devAddress(wranglerToml, args), listed);

  it("names the address wrangler dev serves on, wrangler.toml's or the one the arguments give", () => {
    expect(hostsFor([])).toBe("127.0.0.1:8787");
    expect(hostsFor(["--port", "8797"])).toBe("127.0.0.1:8797");
    expect(hostsFor(["--ip", "localhost", "--port=8790"])).toBe("localhost:8790");
    expect(hostsFor(["--ip", "::1", "--port", "8790"])).toBe("[::1]:8790");
  });

  it("names loopback when wrangler dev listens on every address", () => {
    for (const ip of ["0.0.0.0", "*", "::", "[::]", "0:0:0:0:0:0:0:0"])
      expect(hostsFor(["--ip", ip, "--port", "9000"]), ip).toBe("127.0.0.1:9000");
  });

  it("keeps the hosts the developer listed, each once, after the served address", () => {
    expect(
      hostsFor(["--port", "8797"], ["127.0.0.1:8787, relay.mybox.test ,", "relay.mybox.test,127.0.0.1:8797"]),
    ).toBe("127.0.0.1:8797,127.0.0.1:8787,relay.mybox.test");
    expect(hostsFor([], [undefined, ""])).toBe("127.0.0.1:8787");
  });

  it("makes a served port on another spelling of loopback Relay's own", () => {
    const hosts = parseRelayHosts(hostsFor(["--port", "8797"], ["127.0.0.1:8787"]));
    for (const url of ["http://127.0.0.1:8797/", "http://localhost:8797/v1/webhooks/demo", "http://[::1]:8797/"])
      expect(isRelayHost(new URL(url), hosts), url).toBe(true);
    expect(isRelayHost(new URL("http://127.0.0.1:9000/"), hosts)).toBe(false);
  });

  it("finds RELAY_HOSTS given with --var, in each of its spellings, and no other variable", () => {
    expect(
      relayHostsInArgs(["--port", "1", "--var", "A:1", "RELAY_HOSTS:a.test", "--var=RELAY_HOSTS:b.test:9"]),
    ).toEqual(["a.test", "b.test:9"]);
    expect(relayHostsInArgs(["--var", "OTHER:RELAY_HOSTS:x", "src/index.ts"])).toEqual([]);
  });
});

describe("the vault key", () => {
  const isVaultKey = (key: string) => /^[A-Za-z0-9+/]{43}=$/.test(key) && atob(key).length === 32;

  it("is 32 random bytes in standard base64, a new one each time", () => {
    const keys = [newVaultKey(), newVaultKey()];
    expect(keys.every(isVaultKey)).toBe(true);
    expect(keys[0]).not.toBe(keys[1]);
  });

  it("is never in .dev.vars.example: npm run dev adds one", () => {
    expect(devVar(devVarsExample, VAULT_KEY_VAR)).toBeUndefined();
    expect(devVarsExample).toMatch(/RELAY_VAULT_KEY.*npm run dev adds/s);
  });

  it("is added to a file without one, with a comment, and read back as written", () => {
    const key = newVaultKey();
    const text = withVaultKey(devVarsExample, key)!;
    expect(text.startsWith(devVarsExample)).toBe(true);
    expect(devVar(text, VAULT_KEY_VAR)).toBe(key);
    expect(apiKeysInDevVars(text)).toBe(apiKeysInDevVars(devVarsExample));
    expect(withVaultKey("A=1", key)).toBe(`A=1\n${text.slice(devVarsExample.length)}`);
  });

  it("is never replaced once there, and fills an empty assignment where it stands", () => {
    expect(withVaultKey(`${VAULT_KEY_VAR}="abc"\n`, newVaultKey())).toBeNull();
    const key = newVaultKey();
    expect(withVaultKey(`A=1\n${VAULT_KEY_VAR}=""\nB=2\n`, key)).toBe(`A=1\n${VAULT_KEY_VAR}="${key}"\nB=2\n`);
    const twice = withVaultKey(`${VAULT_KEY_VAR}=old\n${VAULT_KEY_VAR}=\n`, key)!;
    expect(devVar(twice, VAULT_KEY_VAR)).toBe(key);
  });
});

describe("what the dev setup prints", () => {
  const keys = [
    { tenant: "dev", key: "relay-dev-key" },
    { tenant: "acme", key: "acme-dev-key" },
  ];
  const base = {
    createdDevVars: false,
    tightenedFrom: null,
    vaultKeyAdded: false,
    migrationFiles: ["0001_a.sql", "0002_b.sql"],
    applied: [] as string[],
    agents: ["billing", "triage"],
    keys,
    url: "http://127.0.0.1:8787",
    localEndpoints: true,
  };

  it("is a few lines: migrations, agents and tenants, the URL with a key to call it with, the dashboard", () => {
    const lines = setupSummary({
      ...base,
      createdDevVars: true,
      vaultKeyAdded: true,
      applied: ["0001_a.sql", "0002_b.sql"],
    });
    expect(lines.length).toBeLessThanOrEqual(7);
    expect(lines).toContain(
      "  dashboard: http://127.0.0.1:8787/ (sign in with relay-dev-key), API reference: http://127.0.0.1:8787/docs",
    );
    expect(lines).toContain(
      "  .dev.vars created from .dev.vars.example (the dev API keys) and a new random RELAY_VAULT_KEY, readable by you only",
    );
    expect(lines).toContain("  local D1: 2 migrations applied (0001_a, 0002_b)");
    expect(lines).toContain("  2 demo agents loaded (billing, triage) for tenants dev and acme");
    expect(lines.join("\n")).toContain('curl -H "Authorization: Bearer relay-dev-key" http://127.0.0.1:8787/v1/agents');
    expect(lines.join("\n")).toContain("acme-dev-key (tenant acme)");
    expect(lines.join("\n")).toContain("npm run dev:reset");
  });

  it("says the schema is up to date on a second start, and says nothing about .dev.vars it did not create", () => {
    const lines = setupSummary(base);
    expect(lines).toContain("  local D1: schema up to date (2 migrations)");
    expect(lines.join("\n")).not.toContain(".dev.vars created");
    expect(setupSummary({ ...base, applied: ["0002_b.sql"], keys: [keys[0]!] })).toEqual(
      expect.arrayContaining([
        "  local D1: 1 migration applied (0002_b)",
        "  2 demo agents loaded (billing, triage) for tenant dev",
      ]),
    );
  });

  it("says once that a vault key was added to an older .dev.vars, and nothing of it on later starts", () => {
    expect(setupSummary({ ...base, vaultKeyAdded: true })).toContain(
      "  RELAY_VAULT_KEY added to .dev.vars: a new random key for the tenant vault",
    );
    expect(setupSummary(base).join("\n")).not.toContain("RELAY_VAULT_KEY");
  });

  it("says in one line that a .dev.vars open to other users was made owner-only", () => {
    const lines = setupSummary({ ...base, tightenedFrom: 0o644 });
    expect(lines.filter((line) => line.includes("other users"))).toEqual([
      "  .dev.vars was open to other users (mode 0644): now 0600",
    ]);
    expect(setupSummary({ ...base, tightenedFrom: 0o770 })).toContain(
      "  .dev.vars was open to other users (mode 0770): now 0700",
    );
    expect(setupSummary(base).join("\n")).not.toContain("other users");
    expect([octal(0o100600), octal(0o4), octal(0o755)]).toEqual(["0600", "0004", "0755"]);
  });

  it("says so when an older .dev.vars leaves local endpoints refused", () => {
    expect(setupSummary(base).join("\n")).not.toContain("local endpoints");
    expect(setupSummary({ ...base, localEndpoints: false })).toContain(
      '  local endpoints: refused (add RELAY_ALLOW_LOCAL_ENDPOINTS="true" to .dev.vars to call webhook agents and tools on this machine)',
    );
  });

  it("lists names as a sentence does", () => {
    expect([listed([]), listed(["a"]), listed(["a", "b"]), listed(["a", "b", "c"])]).toEqual([
      "",
      "a",
      "a and b",
      "a, b and c",
    ]);
  });
});
