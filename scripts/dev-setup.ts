/**
 * `npm run dev` runs this first: it makes a fresh clone runnable offline with no keys.
 * 1. .dev.vars from .dev.vars.example when missing (the dev API keys);
 * 2. local D1 migrations applied;
 * 3. the demo agents in agents/*.md upserted into local D1 for every dev tenant.
 * RELAY_PERSIST_TO points it at another local state folder (the benchmarks use tmpfs).
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readAgentDir, tenantsOf } from "./lib/agent-files";

const root = join(import.meta.dirname, "..");
const wrangler = join(root, "node_modules", ".bin", "wrangler");
// Non-interactive: wrangler skips its confirmation prompt when CI is set.
const persist = process.env.RELAY_PERSIST_TO ? ["--persist-to", process.env.RELAY_PERSIST_TO] : [];
const run = (args: string[]) => execFileSync(wrangler, [...args, ...persist], { cwd: root, stdio: "inherit", env: { ...process.env, CI: "true" } });

const devVars = join(root, ".dev.vars");
if (!existsSync(devVars)) {
  copyFileSync(join(root, ".dev.vars.example"), devVars);
  console.log("Created .dev.vars from .dev.vars.example (dev API keys).");
}

run(["d1", "migrations", "apply", "DB", "--local"]);

const keys = /RELAY_API_KEYS\s*=\s*"?([^"\n]*)"?/.exec(readFileSync(devVars, "utf8"))?.[1] ?? "";
const tenants = tenantsOf(keys);
const agents = readAgentDir(join(root, "agents"));
const quote = (text: string) => `'${text.replaceAll("'", "''")}'`;
const now = new Date().toISOString();
const statements = tenants.flatMap((tenant) => [
  ...agents.map(
    (agent) =>
      `INSERT INTO agents (tenant, name, definition, created_at, updated_at) VALUES (${quote(tenant)}, ${quote(agent.name)}, ${quote(JSON.stringify(agent))}, ${quote(now)}, ${quote(now)}) ` +
      `ON CONFLICT (tenant, name) DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at;`,
  ),
  `INSERT INTO registry_versions (tenant, version, stamp) VALUES (${quote(tenant)}, 1, ${quote(randomUUID())}) ` +
    `ON CONFLICT (tenant) DO UPDATE SET version = version + 1, stamp = excluded.stamp;`,
]);
const sqlFile = join(mkdtempSync(join(tmpdir(), "relay-")), "agents.sql");
writeFileSync(sqlFile, statements.join("\n"));
run(["d1", "execute", "DB", "--local", "--file", sqlFile]);
console.log(`Loaded ${agents.length} demo agents (${agents.map((a) => a.name).join(", ")}) for tenants: ${tenants.join(", ")}.`);
