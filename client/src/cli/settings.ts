import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { usage } from "./exit.ts";

/**
 * Where the command finds Relay and its key (docs/cli.md, Connecting):
 * 1. `--url`, then a profile named by `--profile` or `RELAY_PROFILE`;
 * 2. `RELAY_URL` and `RELAY_API_KEY`;
 * 3. the config file's default profile;
 * 4. `http://127.0.0.1:8787`, and for a Relay on this machine the first key in the
 *    `.dev.vars` of the folder the command runs in or one above it (`npm run dev` writes it).
 * A profile's key goes only to that profile's URL (the default URL when it names none): a URL
 * from elsewhere needs its own key, so a changed RELAY_URL or --url never carries it away.
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

/** Same scheme, host and port (`https://a/` and `https://a:443` are one). */
function sameOrigin(a: string, b: string): boolean {
  return URL.canParse(a) && URL.canParse(b) && new URL(a).origin === new URL(b).origin;
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
  const fallback = fallbackName === undefined ? undefined : profiles[fallbackName];

  // A named profile is whole: without a url of its own it is the default URL's, not another layer's.
  const url =
    flags.url ??
    (explicit ? (explicit.url ?? DEFAULT_URL) : undefined) ??
    env.RELAY_URL ??
    fallback?.url ??
    DEFAULT_URL;
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
    throw usage(`not an http(s) URL: ${JSON.stringify(url)} (set --url or RELAY_URL)`);

  // A profile's key, where the URL in force is the profile's own; else why it was not sent.
  const held: string[] = [];
  const keyOf = (profile: Profile | undefined, name: string | undefined): string | undefined => {
    if (!profile) return undefined;
    const key = profileKey(profile, env);
    if (!key) return undefined;
    const home = profile.url ?? DEFAULT_URL;
    if (sameOrigin(url, home)) return key;
    held.push(`profile "${name}"'s key is sent only to ${home}`);
    return undefined;
  };
  const candidates: [() => string | undefined, string][] = [
    [() => keyOf(explicit, named), `profile "${named}"`],
    [() => env.RELAY_API_KEY || undefined, "RELAY_API_KEY"],
    [() => (named === undefined ? keyOf(fallback, fallbackName) : undefined), `profile "${fallbackName}"`],
  ];
  for (const [read, source] of candidates) {
    const key = read();
    if (key) return { url, apiKey: key, keySource: source };
  }
  if (isLoopback(url)) {
    const dev = devVarsKey(cwd);
    if (dev) return { url, apiKey: dev.key, keySource: dev.path };
  }
  const why = held.length > 0 ? ` (${held.join("; ")})` : "";
  throw usage(
    `no API key for ${url}${why}: set RELAY_API_KEY, or name a profile with that url and an api_key in ${path} (docs/cli.md)`,
  );
}
