/**
 * `npm run dev` runs this first: it makes a fresh clone runnable offline with no keys.
 * 1. .dev.vars from .dev.vars.example when missing (the dev API keys, local endpoints allowed),
 *    readable by its owner only, with a random RELAY_VAULT_KEY (scripts/lib/dev-vars.ts);
 * 2. local D1 migrations applied;
 * 3. the demo agents in agents/*.md upserted into local D1 for every dev tenant.
 * Wrangler's own output is captured and shown only when a step fails; the user reads a few
 * lines saying what is ready and how to call it.
 * RELAY_PERSIST_TO points it at another local state folder (the benchmarks use tmpfs).
 */
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseApiKeys } from "../src/auth/api-keys";
import type { AgentDefinition } from "../src/schemas/agent";
import { formatProblems } from "./lib/agent-check";
import { readAgentDir } from "./lib/agent-files";
import { CliError, runCli } from "./lib/cli-error";
import {
  apiKeysInDevVars,
  appliedMigrations,
  devUrl,
  devWranglerEnv,
  localEndpointsInDevVars,
  setupSummary,
  shardBindings,
  tenantsOf,
} from "./lib/dev-env";
import { prepareDevVars } from "./lib/dev-vars";

const root = join(import.meta.dirname, "..");
const wrangler = join(root, "node_modules", ".bin", "wrangler");
const persist = process.env.RELAY_PERSIST_TO ? ["--persist-to", process.env.RELAY_PERSIST_TO] : [];
const env = devWranglerEnv(process.env, { nonInteractive: true });

/** Runs a wrangler sub-command with its output captured; returns it, or fails with it. */
function wranglerRun(step: string, args: string[]): string {
  const result = spawnSync(wrangler, [...args, ...persist], { cwd: root, env, encoding: "utf8" });
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}`.trim();
  if (result.status !== 0) {
    const how = result.error ? result.error.message : `exit code ${result.status ?? result.signal}`;
    throw new CliError(
      `Dev setup failed while ${step} (wrangler ${args.join(" ")}: ${how}). Wrangler said:\n${output}`,
    );
  }
  return output;
}

function seedSql(tenants: readonly string[], agents: readonly AgentDefinition[]): string {
  const quote = (text: string) => `'${text.replaceAll("'", "''")}'`;
  const now = new Date().toISOString();
  return tenants
    .flatMap((tenant) => [
      ...agents.map(
        (agent) =>
          `INSERT INTO agents (tenant, name, definition, created_at, updated_at) VALUES (${quote(tenant)}, ${quote(agent.name)}, ${quote(JSON.stringify(agent))}, ${quote(now)}, ${quote(now)}) ` +
          `ON CONFLICT (tenant, name) DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at;`,
      ),
      `INSERT INTO registry_versions (tenant, version, stamp) VALUES (${quote(tenant)}, 1, ${quote(randomUUID())}) ` +
        `ON CONFLICT (tenant) DO UPDATE SET version = version + 1, stamp = excluded.stamp;`,
    ])
    .join("\n");
}

await runCli(() => {
  const devVars = prepareDevVars(root);
  const devVarsText = devVars.text;
  const keys = parseApiKeys(apiKeysInDevVars(devVarsText));
  const tenants = tenantsOf(keys);
  if (tenants.length === 0) {
    throw new CliError(
      "Dev setup: .dev.vars has no usable RELAY_API_KEYS entry (tenant:key, keys of 8+ characters); see .dev.vars.example.",
    );
  }

  const { agents, problems } = readAgentDir(join(root, "agents"));
  if (problems.length > 0)
    throw new CliError(["Dev setup: invalid demo agent files in agents/:", ...formatProblems(problems)].join("\n"));

  const migrationFiles = readdirSync(join(root, "migrations"))
    .filter((f) => f.endsWith(".sql"))
    .sort();
  // The registry first, then each shard (docs/scaling.md, Shards): the same migrations on every database.
  const databases = ["DB", ...shardBindings(readFileSync(join(root, "wrangler.toml"), "utf8"))];
  const applied = [
    ...new Set(
      databases.flatMap((binding) =>
        appliedMigrations(
          wranglerRun(`applying the local D1 migrations to ${binding}`, [
            "d1",
            "migrations",
            "apply",
            binding,
            "--local",
          ]),
          migrationFiles,
        ),
      ),
    ),
  ];

  const sqlDir = mkdtempSync(join(tmpdir(), "relay-"));
  try {
    const sqlFile = join(sqlDir, "agents.sql");
    writeFileSync(sqlFile, seedSql(tenants, agents));
    wranglerRun("loading the demo agents", ["d1", "execute", "DB", "--local", "--file", sqlFile]);
  } finally {
    rmSync(sqlDir, { recursive: true, force: true });
  }

  const url = devUrl(readFileSync(join(root, "wrangler.toml"), "utf8"));
  const summary = setupSummary({
    createdDevVars: devVars.created,
    tightenedFrom: devVars.tightenedFrom,
    vaultKeyAdded: devVars.vaultKeyAdded,
    migrationFiles,
    applied,
    agents: agents.map((a) => a.name),
    keys,
    url,
    localEndpoints: localEndpointsInDevVars(devVarsText),
  });
  console.log(summary.join("\n"));
});
