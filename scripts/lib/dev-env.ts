/**
 * Pure helpers for the local dev start-up (scripts/dev-setup.ts, scripts/dev.ts, and
 * bench/lib/wrangler-dev.ts through scripts/lib/dev-vars.ts): what .dev.vars says and gets,
 * what to run wrangler with, and what to tell the user. No I/O here, so the tests run them in
 * workerd.
 */
type Env = Record<string, string | undefined>;

/**
 * The environment wrangler runs with in dev. Without a network, `wrangler dev` prints a
 * `getaddrinfo ENOTFOUND workers.cloudflare.com` stack twice while fetching the `Request.cf`
 * placeholder data, which Relay never reads; CLOUDFLARE_CF_FETCH_ENABLED=false (a documented
 * wrangler system variable) makes it use its built-in placeholder. WRANGLER_SEND_METRICS=false
 * keeps the dev loop from calling home. Either is only a default: a value the user set wins.
 * CI=true makes `d1 migrations apply` skip its confirmation prompt.
 */
export function devWranglerEnv(env: Env, { nonInteractive = false } = {}): Env {
  return {
    ...env,
    CLOUDFLARE_CF_FETCH_ENABLED: env.CLOUDFLARE_CF_FETCH_ENABLED ?? "false",
    WRANGLER_SEND_METRICS: env.WRANGLER_SEND_METRICS ?? "false",
    ...(nonInteractive ? { CI: "true" } : {}),
  };
}

/**
 * One API key of RELAY_API_KEYS and the tenant it acts for, as src/auth/api-keys.ts's
 * parseApiKeys reads them (written out rather than imported, so the Node suites that start
 * wrangler dev through this module type-check without the Worker's own types).
 */
export interface DevKey {
  tenant: string;
  key: string;
}

/** Tenants of the keys the Worker will accept (its own parser), each once, in order. */
export function tenantsOf(keys: readonly DevKey[]): string[] {
  return [...new Set(keys.map((entry) => entry.tenant))];
}

/**
 * The value a .dev.vars file gives `name` (undefined when it gives none): `NAME=value`, the
 * value quoted or not, the last assignment winning, as wrangler's dotenv parser reads it.
 */
export function devVar(devVars: string, name: string): string | undefined {
  let value: string | undefined;
  for (const match of devVars.matchAll(new RegExp(`^[ \\t]*(?:export[ \\t]+)?${name}[ \\t]*=[ \\t]*(.*)$`, "gm"))) {
    const raw = (match[1] ?? "").trim();
    const quoted = /^(["'])(.*?)\1/.exec(raw);
    value = quoted ? (quoted[2] ?? "") : raw.replace(/#.*$/, "");
  }
  return value?.trim();
}

/** The RELAY_API_KEYS value of a .dev.vars file ("" when absent). */
export function apiKeysInDevVars(devVars: string): string {
  return devVar(devVars, "RELAY_API_KEYS") ?? "";
}

/** Whether a .dev.vars file switches RELAY_ALLOW_LOCAL_ENDPOINTS on (as the Worker reads it: `true`, any case). */
export function localEndpointsInDevVars(devVars: string): boolean {
  return devVar(devVars, "RELAY_ALLOW_LOCAL_ENDPOINTS")?.toLowerCase() === "true";
}

/** The tenant vault's keys: one or more comma-separated base64 keys of 32 bytes, the first one encrypting. */
export const VAULT_KEY_VAR = "RELAY_VAULT_KEY";

/** A new vault key: 32 random bytes from the platform's CSPRNG, in standard base64. */
export function newVaultKey(): string {
  return btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
}

/**
 * The .dev.vars text with `key` as RELAY_VAULT_KEY when it has none (or an empty one), or
 * null when it has one: a key made once is kept, since what the local vault stored is
 * unreadable without it.
 */
export function withVaultKey(devVars: string, key: string): string | null {
  if (devVar(devVars, VAULT_KEY_VAR)) return null;
  const line = `${VAULT_KEY_VAR}="${key}"`;
  // An empty assignment is replaced where it stands (the last one: it is the one that counts).
  const empty = [...devVars.matchAll(new RegExp(`^[ \\t]*(?:export[ \\t]+)?${VAULT_KEY_VAR}[ \\t]*=.*$`, "gm"))].at(-1);
  if (empty) return devVars.slice(0, empty.index) + line + devVars.slice(empty.index + empty[0].length);
  const separator = devVars === "" || devVars.endsWith("\n") ? "" : "\n";
  return `${devVars}${separator}\n# The tenant vault's key, made by npm run dev (32 random bytes, base64). Keep it: what the\n# local vault holds cannot be read without it.\n${line}\n`;
}

/** The shard bindings wrangler.toml declares (AUDIT_DB_0 on), in order. */
export function shardBindings(toml: string): string[] {
  return [...toml.matchAll(/^binding\s*=\s*"(AUDIT_DB_\d+)"/gm)].map((m) => m[1]!);
}

/** The migration files whose names appear in `wrangler d1 migrations apply` output: the ones it applied. */
export function appliedMigrations(applyOutput: string, migrationFiles: readonly string[]): string[] {
  return migrationFiles.filter((file) => applyOutput.includes(file));
}

/** Where `wrangler dev` listens. */
export interface DevAddress {
  protocol: "http" | "https";
  /** The address or name it listens on, as given (`127.0.0.1`, `localhost`, `0.0.0.0`, `::1`). */
  ip: string;
  port: string;
}

/** The value of `--name value` or `--name=value` among wrangler's arguments, the last one winning. */
function argValue(args: readonly string[], name: string): string | undefined {
  let value: string | undefined;
  args.forEach((arg, i) => {
    if (arg === `--${name}`) value = args[i + 1];
    else if (arg.startsWith(`--${name}=`)) value = arg.slice(name.length + 3);
  });
  return value;
}

/**
 * Where `wrangler dev` listens: the `--ip`, `--port` and `--local-protocol` arguments given
 * after `--`, else wrangler.toml's [dev] table, else wrangler's defaults (localhost:8787).
 */
export function devAddress(wranglerToml: string, args: readonly string[] = []): DevAddress {
  const dev = /^\[dev\][ \t]*\r?\n([\s\S]*?)(?=^\[|(?![\s\S]))/m.exec(wranglerToml)?.[1] ?? "";
  const ip = argValue(args, "ip") ?? /^\s*ip\s*=\s*"([^"]+)"/m.exec(dev)?.[1] ?? "localhost";
  const port = argValue(args, "port") ?? /^\s*port\s*=\s*(\d+)/m.exec(dev)?.[1] ?? "8787";
  const protocol = argValue(args, "local-protocol") ?? /^\s*local_protocol\s*=\s*"(\w+)"/m.exec(dev)?.[1];
  return { protocol: protocol === "https" ? "https" : "http", ip, port };
}

/**
 * The host to call a listening address at: an address that listens everywhere (`0.0.0.0`,
 * `::`, wrangler's `*`) is reached on loopback; an IPv6 address goes in brackets.
 */
function reachableHost(ip: string): string {
  const bare = ip.replace(/^\[(.*)\]$/, "$1");
  if (bare === "*" || bare === "0.0.0.0" || /^[0:]*::?[0:]*$/.test(bare)) return "127.0.0.1";
  return bare.includes(":") ? `[${bare}]` : bare;
}

/** The local URL `wrangler dev` serves: see {@link devAddress}. */
export function devUrl(wranglerToml: string, args: readonly string[] = []): string {
  const address = devAddress(wranglerToml, args);
  return `${address.protocol}://${reachableHost(address.ip)}:${address.port}`;
}

/**
 * The RELAY_HOSTS a local Relay runs with: the address it serves on first (so Relay knows its
 * own origin whatever port it was given), then the hosts the developer listed (.dev.vars,
 * `--var RELAY_HOSTS:…`), each once. Loopback hosts are compared by meaning
 * (docs/security.md), so `127.0.0.1:8797` covers `localhost:8797` and `[::1]:8797` too.
 */
export function devRelayHosts(address: DevAddress, listed: readonly (string | undefined)[] = []): string {
  const served = `${reachableHost(address.ip)}:${address.port}`;
  const entries = listed.flatMap((text) => (text ?? "").split(",")).map((entry) => entry.trim());
  return [...new Set([served, ...entries.filter((entry) => entry !== "")])].join(",");
}

/** The RELAY_HOSTS values given on wrangler's command line (`--var RELAY_HOSTS:…`, `--var=RELAY_HOSTS:…`). */
export function relayHostsInArgs(args: readonly string[]): string[] {
  const vars: string[] = [];
  args.forEach((arg, i) => {
    if (arg.startsWith("--var=")) vars.push(arg.slice("--var=".length));
    else if (arg === "--var")
      for (let j = i + 1; j < args.length && !args[j]!.startsWith("-"); j++) vars.push(args[j]!);
  });
  return vars.filter((v) => v.startsWith("RELAY_HOSTS:")).map((v) => v.slice("RELAY_HOSTS:".length));
}

/** Joins names for a sentence: "a", "a and b", "a, b and c". */
export function listed(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

/** What the dev setup did, for {@link setupSummary}. */
export interface SetupFacts {
  createdDevVars: boolean;
  /** The mode .dev.vars had when it was open to other users and was made owner-only (null: it was not). */
  tightenedFrom: number | null;
  /** A RELAY_VAULT_KEY was made and written to .dev.vars this time. */
  vaultKeyAdded: boolean;
  migrationFiles: readonly string[];
  applied: readonly string[];
  agents: readonly string[];
  keys: readonly DevKey[];
  url: string;
  /** .dev.vars lets Relay call local endpoints (RELAY_ALLOW_LOCAL_ENDPOINTS). */
  localEndpoints: boolean;
}

/** A file mode as `ls -l` people write it: 0644. */
export const octal = (mode: number): string => `0${(mode & 0o777).toString(8).padStart(3, "0")}`;

/** The few lines `npm run dev` prints before wrangler's own: state, agents, where to call and with which key. */
export function setupSummary(facts: SetupFacts): string[] {
  const strip = (file: string) => file.replace(/\.sql$/, "");
  const lines = ["Relay dev setup:"];
  if (facts.createdDevVars)
    lines.push(
      `  .dev.vars created from .dev.vars.example (the dev API keys)${facts.vaultKeyAdded ? ` and a new random ${VAULT_KEY_VAR}` : ""}, readable by you only`,
    );
  else if (facts.vaultKeyAdded)
    lines.push(`  ${VAULT_KEY_VAR} added to .dev.vars: a new random key for the tenant vault`);
  if (facts.tightenedFrom !== null)
    lines.push(
      `  .dev.vars was open to other users (mode ${octal(facts.tightenedFrom)}): now ${octal(facts.tightenedFrom & 0o700)}`,
    );
  lines.push(
    facts.applied.length > 0
      ? `  local D1: ${facts.applied.length} migration${facts.applied.length === 1 ? "" : "s"} applied (${facts.applied.map(strip).join(", ")})`
      : `  local D1: schema up to date (${facts.migrationFiles.length} migrations)`,
  );
  const tenants = tenantsOf(facts.keys);
  lines.push(
    `  ${facts.agents.length} demo agents loaded (${facts.agents.join(", ")}) for tenant${tenants.length === 1 ? "" : "s"} ${listed(tenants)}`,
  );
  if (!facts.localEndpoints)
    lines.push(
      '  local endpoints: refused (add RELAY_ALLOW_LOCAL_ENDPOINTS="true" to .dev.vars to call webhook agents and tools on this machine)',
    );
  const first = facts.keys[0];
  if (first) {
    lines.push(
      `  API: ${facts.url}/v1 once wrangler says Ready, e.g. curl -H "Authorization: Bearer ${first.key}" ${facts.url}/v1/agents`,
    );
    lines.push(`  dashboard: ${facts.url}/ (sign in with ${first.key}), API reference: ${facts.url}/docs`);
    lines.push(
      `  keys (.dev.vars): ${facts.keys.map((k) => `${k.key} (tenant ${k.tenant})`).join(", ")}; start afresh with npm run dev:reset`,
    );
  }
  return lines;
}
