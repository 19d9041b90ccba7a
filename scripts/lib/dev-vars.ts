/**
 * .dev.vars on disk, for `npm run dev` and everything that starts `wrangler dev` as it does
 * (bench/lib/wrangler-dev.ts, which the Node test suites use too). The file holds the API
 * keys and the vault key, so it is the owner's alone. The decisions are dev-env.ts's pure
 * helpers; this module only reads and writes.
 */
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { devAddress, devRelayHosts, devVar, newVaultKey, relayHostsInArgs, withVaultKey } from "./dev-env";

/** Owner read and write, nobody else anything. */
export const DEV_VARS_MODE = 0o600;

/** What {@link prepareDevVars} found and did. */
export interface PreparedDevVars {
  /** The file's text after the changes. */
  text: string;
  created: boolean;
  /** The mode the file had when it was open to other users and was made owner-only (null: it was not). */
  tightenedFrom: number | null;
  vaultKeyAdded: boolean;
}

/**
 * Makes `<root>/.dev.vars` ready: created from .dev.vars.example with mode 0600 when missing;
 * when present and open to the group or others, made owner-only (its owner bits kept); given
 * a new RELAY_VAULT_KEY when it has none. A key already there is never replaced.
 */
export function prepareDevVars(root: string): PreparedDevVars {
  const file = join(root, ".dev.vars");
  if (!existsSync(file)) {
    const example = readFileSync(join(root, ".dev.vars.example"), "utf8");
    const text = withVaultKey(example, newVaultKey()) ?? example;
    // Created with its final mode ("wx": never through a file or link that appeared meanwhile),
    // so the keys are never readable by others, not even for a moment.
    writeFileSync(file, text, { mode: DEV_VARS_MODE, flag: "wx" });
    return { text, created: true, tightenedFrom: null, vaultKeyAdded: text !== example };
  }
  const tightenedFrom = tighten(file);
  const text = readFileSync(file, "utf8");
  const updated = withVaultKey(text, newVaultKey());
  if (updated !== null) writeFileSync(file, updated);
  return { text: updated ?? text, created: false, tightenedFrom, vaultKeyAdded: updated !== null };
}

/** Takes the group's and others' permissions off a file; returns the mode it had, or null when it had none to take. */
function tighten(file: string): number | null {
  // Windows has no such permission bits: stat reports 0666 for any writable file.
  if (process.platform === "win32") return null;
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) === 0) return null;
  chmodSync(file, mode & 0o700);
  return mode;
}

/**
 * The RELAY_HOSTS `wrangler dev`, started in `root` with `args`, must run with: the address
 * those arguments (or wrangler.toml's [dev]) make it serve on, then the hosts the developer
 * listed in .dev.vars or with `--var RELAY_HOSTS:…`. Passed with `--var`, which wins over
 * .dev.vars in wrangler dev.
 */
export function relayHostsForDev(root: string, args: readonly string[]): string {
  const address = devAddress(readFileSync(join(root, "wrangler.toml"), "utf8"), args);
  const devVars = join(root, ".dev.vars");
  const listed = existsSync(devVars) ? devVar(readFileSync(devVars, "utf8"), "RELAY_HOSTS") : undefined;
  return devRelayHosts(address, [listed, ...relayHostsInArgs(args)]);
}
