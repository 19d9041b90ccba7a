/**
 * Pure helpers for the local dev start-up (scripts/dev-setup.ts, scripts/dev.ts): what to run
 * wrangler with, and what to tell the user. No I/O here, so the tests run them in workerd.
 */
import type { parseApiKeys } from "../../src/auth/api-keys";

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

/** One API key of RELAY_API_KEYS and the tenant it acts for. */
export type DevKey = ReturnType<typeof parseApiKeys>[number];

/** Tenants of the keys the Worker will accept (its own parser), each once, in order. */
export function tenantsOf(keys: readonly DevKey[]): string[] {
  return [...new Set(keys.map((entry) => entry.tenant))];
}

/** The RELAY_API_KEYS value of a .dev.vars file ("" when absent). */
export function apiKeysInDevVars(devVars: string): string {
  return /^\s*RELAY_API_KEYS\s*=\s*"?([^"\n]*)"?/m.exec(devVars)?.[1]?.trim() ?? "";
}

/** Whether a .dev.vars file switches RELAY_ALLOW_LOCAL_ENDPOINTS on (as the Worker reads it: `true`, any case). */
export function localEndpointsInDevVars(devVars: string): boolean {
  return /^\s*RELAY_ALLOW_LOCAL_ENDPOINTS\s*=\s*"?true"?\s*$/im.test(devVars);
}

/** The migration files whose names appear in `wrangler d1 migrations apply` output: the ones it applied. */
export function appliedMigrations(applyOutput: string, migrationFiles: readonly string[]): string[] {
  return migrationFiles.filter((file) => applyOutput.includes(file));
}

/** The local URL `wrangler dev` serves, from wrangler.toml's [dev] table (wrangler's defaults otherwise). */
export function devUrl(wranglerToml: string): string {
  const dev = /^\[dev\][ \t]*\r?\n([\s\S]*?)(?=^\[|(?![\s\S]))/m.exec(wranglerToml)?.[1] ?? "";
  const ip = /^\s*ip\s*=\s*"([^"]+)"/m.exec(dev)?.[1] ?? "localhost";
  const port = /^\s*port\s*=\s*(\d+)/m.exec(dev)?.[1] ?? "8787";
  const protocol = /^\s*local_protocol\s*=\s*"https"/m.test(dev) ? "https" : "http";
  return `${protocol}://${ip}:${port}`;
}

/** Joins names for a sentence: "a", "a and b", "a, b and c". */
export function listed(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

/** What the dev setup did, for {@link setupSummary}. */
export interface SetupFacts {
  createdDevVars: boolean;
  migrationFiles: readonly string[];
  applied: readonly string[];
  agents: readonly string[];
  keys: readonly DevKey[];
  url: string;
  /** .dev.vars lets Relay call local endpoints (RELAY_ALLOW_LOCAL_ENDPOINTS). */
  localEndpoints: boolean;
}

/** The few lines `npm run dev` prints before wrangler's own: state, agents, where to call and with which key. */
export function setupSummary(facts: SetupFacts): string[] {
  const strip = (file: string) => file.replace(/\.sql$/, "");
  const lines = ["Relay dev setup:"];
  if (facts.createdDevVars) lines.push("  .dev.vars created from .dev.vars.example (the dev API keys)");
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
