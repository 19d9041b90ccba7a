import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { CliError, CODE, EXIT, usage } from "./exit.ts";

/**
 * Where the command finds Relay and its key (docs/cli.md, Connecting):
 * 1. `--url`, then a profile named by `--profile` or `RELAY_PROFILE`;
 * 2. `RELAY_URL` and `RELAY_API_KEY`;
 * 3. the config file's default profile;
 * 4. `http://127.0.0.1:8787`, and for a Relay on this machine the first key in the
 *    `.dev.vars` of the folder the command runs in or one above it (`npm run dev` writes it).
 * Each key goes only to the URL it was given for (resolveSettings).
 */

export const DEFAULT_URL = "http://127.0.0.1:8787";

export interface Profile {
  url?: string;
  /** The key itself; prefer `api_key_env` so the file holds no secret. */
  api_key?: string;
  /** The name of an environment variable holding the key. */
  api_key_env?: string;
}

export interface ConfigFile {
  default_profile?: string;
  profiles?: Record<string, Profile>;
}

export interface Settings {
  url: string;
  apiKey: string;
  /** Where the key came from, for `--verbose`-style hints and error messages. */
  keySource: string;
}

export interface SettingsInput {
  flags: { url?: string | undefined; profile?: string | undefined };
  env: Record<string, string | undefined>;
  cwd: string;
}

/** The config file's path: `RELAY_CONFIG`, else `$XDG_CONFIG_HOME/relay/config.json`, else `~/.config/relay/config.json`. */
export function configPath(env: Record<string, string | undefined>): string {
  if (env.RELAY_CONFIG) return env.RELAY_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
  return join(base, "relay", "config.json");
}

function readConfigFile(path: string): ConfigFile | null {
  if (!existsSync(path)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw usage(`cannot read the config file ${path}: ${(error as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw usage(`the config file ${path} is not a JSON object`);
  return parsed as ConfigFile;
}

function profileKey(profile: Profile, env: SettingsInput["env"]): string | undefined {
  if (profile.api_key_env) return env[profile.api_key_env] || undefined;
  return profile.api_key || undefined;
}

function isLoopback(url: string): boolean {
  const host = new URL(url).hostname;
  return host === "127.0.0.1" || host === "localhost" || host === "[::1]";
}

/** The first key of `RELAY_API_KEYS` in the nearest `.dev.vars` at or above `cwd`. */
export function devVarsKey(cwd: string): { key: string; path: string } | null {
  for (let dir = cwd; ; dir = dirname(dir)) {
    const path = join(dir, ".dev.vars");
    if (existsSync(path)) {
      const entry = /^\s*RELAY_API_KEYS\s*=\s*"?([^",\n]*)/m.exec(readFileSync(path, "utf8"))?.[1] ?? "";
      const key = entry.slice(entry.indexOf(":") + 1).trim();
      return key ? { key, path } : null;
    }
    if (dirname(dir) === dir) return null;
  }
}

/** Two URLs of one Relay: the same scheme, host and port (`https://a` and `https://a:443/` are one). */
export function sameOrigin(a: string, b: string): boolean {
  if (!URL.canParse(a) || !URL.canParse(b)) return false;
  const origin = new URL(a).origin;
  // An origin "null" (a scheme without hosts) is no Relay's.
  return origin !== "null" && origin === new URL(b).origin;
}

/** The URL a profile's key is for: its `url`, or the default one when it names none. */
function profileUrl(profile: Profile): string {
  return profile.url ?? DEFAULT_URL;
}

/**
 * The URL in force and its key. The URL comes from the first layer that names one; a key goes
 * only to the URL it was given for: a profile's to its own `url` (by origin), `RELAY_API_KEY`
 * to `RELAY_URL` when that is set (to the URL in force when it is not), `.dev.vars`'s to a
 * Relay on this machine. A key held back for another URL is said, never sent (docs/cli.md,
 * Which key goes where).
 */
export function resolveSettings({ flags, env, cwd }: SettingsInput): Settings {
  const path = configPath(env);
  const file = readConfigFile(path);
  const profiles = file?.profiles ?? {};
  const named = flags.profile ?? env.RELAY_PROFILE;
  if (named !== undefined && !Object.hasOwn(profiles, named)) {
    const known = Object.keys(profiles);
    throw usage(`no profile "${named}" in ${path}${known.length > 0 ? ` (it has: ${known.join(", ")})` : ""}`);
  }
  const fallbackName = file?.default_profile;
  const explicit = named === undefined ? undefined : profiles[named];
  // The default profile counts only when no profile is named.
  const fallback = fallbackName === undefined || named !== undefined ? undefined : profiles[fallbackName];

  const url = flags.url ?? explicit?.url ?? env.RELAY_URL ?? fallback?.url ?? DEFAULT_URL;
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
    throw usage(`not an http(s) URL: ${JSON.stringify(url)} (set --url or RELAY_URL)`);

  const envKey = env.RELAY_API_KEY || undefined;
  const candidates: { key: string | undefined; source: string; forUrl: string | undefined }[] = [
    {
      key: explicit && profileKey(explicit, env),
      source: `profile "${named}"`,
      forUrl: explicit && profileUrl(explicit),
    },
    { key: envKey, source: "RELAY_API_KEY", forUrl: env.RELAY_URL },
    {
      key: fallback && profileKey(fallback, env),
      source: `profile "${fallbackName}"`,
      forUrl: fallback && profileUrl(fallback),
    },
  ];
  const heldBack: string[] = [];
  for (const { key, source, forUrl } of candidates) {
    if (!key) continue;
    if (forUrl === undefined || sameOrigin(url, forUrl)) return { url, apiKey: key, keySource: source };
    heldBack.push(
      `${source === "RELAY_API_KEY" ? "RELAY_API_KEY is for RELAY_URL" : `${source}'s key is for`} ${forUrl}`,
    );
  }
  if (isLoopback(url)) {
    const dev = devVarsKey(cwd);
    if (dev) return { url, apiKey: dev.key, keySource: dev.path };
  }
  if (heldBack.length > 0)
    throw new CliError(
      `no API key for ${url}, and no other is sent there: ${heldBack.join("; ")}. Give ${url} its own key: RELAY_API_KEY (with RELAY_URL unset or set to it), or a profile whose url it is (docs/cli.md, Which key goes where)`,
      EXIT.USAGE,
      CODE.KEY_NOT_FOR_URL,
    );
  throw new CliError(
    `no API key for ${url}: set RELAY_API_KEY, or name a profile with an api_key in ${path} (docs/cli.md, Connecting)`,
    EXIT.USAGE,
    CODE.NO_API_KEY,
  );
}
