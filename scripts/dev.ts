/**
 * `npm run dev` (after scripts/dev-setup.ts): `wrangler dev` with the offline-friendly
 * defaults of devWranglerEnv, so a machine without a network starts quietly. Arguments after
 * `--` go to wrangler (`npm run dev -- --port 8790`).
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { devWranglerEnv } from "./lib/dev-env";

const root = join(import.meta.dirname, "..");
const child = spawn(join(root, "node_modules", ".bin", "wrangler"), ["dev", ...process.argv.slice(2)], {
  cwd: root,
  env: devWranglerEnv(process.env),
  stdio: "inherit",
});
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
