/**
 * `npm run dev` (after scripts/dev-setup.ts): `wrangler dev` with the offline-friendly
 * defaults of devWranglerEnv, so a machine without a network starts quietly. Arguments after
 * `--` go to wrangler (`npm run dev -- --port 8790`). RELAY_HOSTS is the address it serves
 * on plus the hosts .dev.vars lists, so Relay knows its own origin on any port
 * (docs/security.md, Relay's own hosts).
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { devUrl, devWranglerEnv } from "./lib/dev-env";
import { relayHostsForDev } from "./lib/dev-vars";

const root = join(import.meta.dirname, "..");
const args = process.argv.slice(2);
const relayHosts = relayHostsForDev(root, args);
// The setup summary (npm's predev, which never sees these arguments) named wrangler.toml's URL.
const toml = readFileSync(join(root, "wrangler.toml"), "utf8");
if (devUrl(toml, args) !== devUrl(toml))
  console.log(`  serving on ${devUrl(toml, args)} (the arguments after --), not ${devUrl(toml)}`);

// At the end: wrangler's --var takes every value up to the next option, so placed first it
// would swallow a script path the developer gave. --var wins over .dev.vars (tried: wrangler 4.164).
const child = spawn(
  join(root, "node_modules", ".bin", "wrangler"),
  ["dev", ...args, "--var", `RELAY_HOSTS:${relayHosts}`],
  { cwd: root, env: devWranglerEnv(process.env), stdio: "inherit" },
);
// Ctrl-C reaches wrangler directly (same terminal process group) and it shuts workerd down:
// this process waits for it rather than dying first. A SIGTERM sent to this process alone is
// passed on.
process.on("SIGINT", () => {});
for (const signal of ["SIGTERM", "SIGHUP"] as const) process.on(signal, () => child.kill(signal));
child.on("error", (error) => {
  console.error(`Could not start wrangler dev: ${error.message}`);
  process.exit(1);
});
child.on("exit", (code, signal) => process.exit(code ?? (signal === "SIGINT" || signal === "SIGTERM" ? 0 : 1)));
