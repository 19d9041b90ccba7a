/**
 * Runs the A2A TCK (github.com/a2aproject/a2a-tck) against Relay, as docs/a2a.md reports it:
 *
 *   npx tsx scripts/a2a-tck/run.ts <path to an a2a-tck checkout> [category] [--without-kit-assumptions]
 *
 * Relay serves under `wrangler dev` on 127.0.0.1:8895 with fresh local state and the demo
 * agents; the kit talks to the `billing` agent's JSON-RPC endpoint and, where it reads the
 * origin's card, to the front door. The kit sends generic messages ("Test message") no
 * routing rule matches, so the dev tenant's routing falls back to `triage`. It sends no
 * `A2A-Version` header, which A2A 1.0 requires; `A2A_AUTH_HEADERS` adds it with the key.
 * The kit's Python needs pytest, httpx, grpcio and friends: Debian's python3-* packages
 * cover them (`PYTHON=/usr/bin/python3` picks Debian's interpreter when another comes first on
 * PATH); the kit's own runner also wants pytest-json-report, so pytest is run directly.
 * Category: `mandatory` (default), `capabilities`, `quality` or `features`.
 * `--without-kit-assumptions` loads relay_tck_assumptions.py beside this file, which takes two
 * assumptions A2A 1.0 does not make out of the kit's ListTasks helper (docs/a2a.md, The A2A TCK).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { startDevServer } from "../../bench/lib/wrangler-dev";

const PORT = 8895;
const KEY = "relay-dev-key";
const CATEGORIES: Record<string, { path: string; markers?: string }> = {
  mandatory: { path: "tests/mandatory/", markers: "mandatory or mandatory_protocol or mandatory_jsonrpc" },
  capabilities: { path: "tests/optional/capabilities/" },
  quality: { path: "tests/optional/quality/" },
  features: { path: "tests/optional/features/" },
};

const flags = process.argv.slice(2).filter((a) => a.startsWith("--"));
const [kitArg, category = "mandatory"] = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const relaxed = flags.includes("--without-kit-assumptions");
const chosen = CATEGORIES[category];
if (!kitArg || !chosen) {
  console.error(
    `usage: npx tsx scripts/a2a-tck/run.ts <a2a-tck checkout> [${Object.keys(CATEGORIES).join("|")}] [--without-kit-assumptions]`,
  );
  process.exit(2);
}
const kit = resolve(kitArg);
const state = mkdtempSync(join(tmpdir(), "relay-tck-"));
const server = await startDevServer(PORT, state);
try {
  const routing = await fetch(`${server.url}/v1/config/routing`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${KEY}`, "Content-Type": "application/json" },
    body: JSON.stringify({ fallback: "default_agent", default_agent: "triage" }),
  });
  if (!routing.ok) throw new Error(`routing fallback: ${routing.status} ${await routing.text()}`);
  const run = spawnSync(
    process.env.PYTHON ?? "python3",
    [
      "-m",
      "pytest",
      chosen.path,
      `--sut-url=${server.url}/a2a/billing`,
      "--test-scope=all",
      "--transports=jsonrpc",
      "--tb=line",
      "-q",
      "-p",
      "no:cacheprovider",
      ...(chosen.markers ? ["-m", chosen.markers] : []),
      ...(relaxed ? ["-p", "relay_tck_assumptions"] : []),
    ],
    {
      cwd: kit,
      stdio: "inherit",
      env: {
        ...process.env,
        A2A_AUTH_TYPE: "bearer",
        A2A_AUTH_TOKEN: KEY,
        A2A_AUTH_HEADERS: JSON.stringify({ "A2A-Version": "1.0" }),
        ...(relaxed ? { PYTHONPATH: dirname(import.meta.filename) } : {}),
      },
    },
  );
  process.exitCode = run.status ?? 1;
} finally {
  await server.stop();
  rmSync(state, { recursive: true, force: true });
}
