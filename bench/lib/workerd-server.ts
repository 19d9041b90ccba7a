import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { unstable_readConfig } from "wrangler";
import { FLUSH_WINDOW_MS } from "../../src/audit/outbox-policy";
import { type DevServer, UNLIMITED_QUOTAS, workerdCpu, workerdRss } from "./wrangler-dev";

/**
 * Relay on workerd through Miniflare's API, without `wrangler dev`'s proxy in front: the
 * Worker wrangler would deploy (`wrangler deploy --dry-run` bundles it), its Durable Objects
 * on SQLite, D1 migrated, the demo agents loaded through the API. Requests go straight to
 * workerd's socket, so a benchmark measures Relay rather than the dev proxy.
 */

const root = join(import.meta.dirname, "..", "..");

/**
 * Waits out the flushes to D1 that the requests made so far left behind (a flush window
 * and a margin), so the workerd CPU read next counts them in the phase that caused them.
 */
export const flushesSettled = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, FLUSH_WINDOW_MS + 500));

/** The migrations' statements, one at a time (they hold no semicolons inside statements). */
export function migrationStatements(): string[] {
  const files = readdirSync(join(root, "migrations"))
    .filter((f) => f.endsWith(".sql"))
    .sort();
  return files.flatMap((file) =>
    readFileSync(join(root, "migrations", file), "utf8")
      .replace(/--.*$/gm, "")
      .split(/;\s*$/m)
      .map((statement) => statement.trim())
      .filter((statement) => statement.length > 0),
  );
}

/**
 * A fresh folder for local state in memory (tmpfs), removed by the caller. Miniflare's own
 * default is a folder in the OS temp dir, on disk here, where every SQLite commit of an
 * object waits for the disk and the benchmark would measure the disk rather than Relay.
 */
export function memoryStateFolder(prefix: string): string {
  return mkdtempSync(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), prefix));
}

/**
 * `inspectorPort`: where workerd's DevTools inspector listens (for a CPU profile), when given.
 * `persistTo`: a folder for the objects' SQLite files and D1, kept after `stop`; without
 * it, local state is in memory (a tmpfs folder of its own, removed at `stop`).
 * `seed`: runs on D1 after the migrations, before the demo agents are loaded. `migrate`: false
 * for a restart on state a first start migrated already.
 * `entry`: another Worker module to bundle in place of wrangler.toml's `main`, with the
 * same bindings (a bench's wrapper around Relay, e.g. bench/lib/metered-worker.ts).
 * `probes`: that many more Workers of the same bundle (`probe-1`…), each on a port of its own
 * (`probeUrls`). workerd runs each Worker of its config in an isolate of its own, so a probe's
 * module state (the routers an isolate holds) starts empty; its Durable Object bindings name
 * the main Worker's classes and its D1 is the main Worker's database, so a probe reaches the
 * same objects and data as the main Worker does — a fresh isolate beside running objects.
 * `shards`: how many D1 shards (AUDIT_DB_0 on) the Worker has, each migrated like DB; wrangler.toml's
 * two by default.
 */
export async function startWorkerdServer(
  port: number,
  key: string,
  vars: Record<string, string> = {},
  inspectorPort?: number,
  persistTo?: string,
  seed?: (db: D1Database) => Promise<void>,
  migrate = true,
  entry?: string,
  probes = 0,
  shards = 2,
): Promise<DevServer & { probeUrls: string[]; shardDatabases: () => Promise<D1Database[]> }> {
  const build = mkdtempSync(join(tmpdir(), "relay-bundle-"));
  const script = entry === undefined ? [] : [entry];
  execFileSync(join(root, "node_modules", ".bin", "wrangler"), ["deploy", ...script, "--dry-run", "--outdir", build], {
    cwd: root,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true", WRANGLER_LOG: "error" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const config = unstable_readConfig({ config: join(root, "wrangler.toml") });
  const bindings = config.durable_objects.bindings as { name: string; class_name: string }[];
  const worker = {
    modules: true,
    modulesRoot: build,
    scriptPath: join(build, entry === undefined ? "index.js" : `${basename(entry).replace(/\.ts$/, "")}.js`),
    compatibilityDate: config.compatibility_date!,
    compatibilityFlags: config.compatibility_flags,
    d1Databases: {
      DB: "relay",
      ...Object.fromEntries(Array.from({ length: shards }, (_, i) => [`AUDIT_DB_${i}`, `relay-shard-${i}`])),
    },
    bindings: {
      ...(config.vars as Record<string, string>),
      RELAY_API_KEYS: `dev:${key}`,
      ...UNLIMITED_QUOTAS,
      ...vars,
    },
  };
  const own = Object.fromEntries(bindings.map((b) => [b.name, { className: b.class_name, useSQLite: true }]));
  // The main Worker is named only when probes need to name its classes (a name is part of the
  // objects' storage path, so a state folder is started the same way each time).
  const probePorts = Array.from({ length: probes }, (_, i) => port + 1 + i);
  const probeWorkers = probePorts.map((probePort, i) => ({
    ...worker,
    name: `probe-${i + 1}`,
    durableObjects: Object.fromEntries(
      bindings.map((b) => [b.name, { className: b.class_name, scriptName: config.name!, useSQLite: true }]),
    ),
    unsafeDirectSockets: [{ host: "127.0.0.1", port: probePort }],
  }));
  // Miniflare 5 takes the classic options through its converter.
  const options = convertV4MiniflareOptions({
    host: "127.0.0.1",
    port,
    ...(inspectorPort === undefined ? {} : { inspectorPort }),
    ...(probes === 0
      ? { ...worker, durableObjects: own }
      : { workers: [{ ...worker, name: config.name!, durableObjects: own }, ...probeWorkers] }),
  });
  const state = persistTo ?? memoryStateFolder("relay-bench-state-");
  const mf = new Miniflare({ ...options, resourcePersistencePath: state });
  const stop = async () => {
    await mf.dispose();
    rmSync(build, { recursive: true, force: true });
    if (persistTo === undefined) rmSync(state, { recursive: true, force: true });
  };
  try {
    const url = (await mf.ready).toString().replace(/\/$/, "");
    const db = await mf.getD1Database("DB");
    if (migrate)
      for (const binding of ["DB", ...Array.from({ length: shards }, (_, i) => `AUDIT_DB_${i}`)]) {
        const each = await mf.getD1Database(binding);
        for (const statement of migrationStatements()) await each.prepare(statement).run();
      }
    await seed?.(db as unknown as D1Database);
    for (const file of readdirSync(join(root, "agents")).filter((f) => f.endsWith(".md"))) {
      const name = file.slice(0, -3);
      const response = await fetch(`${url}/v1/agents/${name}`, {
        method: "PUT",
        headers: { Authorization: `Bearer ${key}`, "Content-Type": "text/markdown" },
        body: readFileSync(join(root, "agents", file), "utf8"),
      });
      if (!response.ok) throw new Error(`loading agents/${file}: ${response.status} ${await response.text()}`);
    }
    return {
      url,
      probeUrls: probePorts.map((p) => `http://127.0.0.1:${p}`),
      /** The shards' D1 databases, read from Node (a bench counts what reached them). */
      shardDatabases: () =>
        Promise.all(
          Array.from(
            { length: shards },
            async (_, i) => (await mf.getD1Database(`AUDIT_DB_${i}`)) as unknown as D1Database,
          ),
        ),
      process: undefined as never,
      workerdRssMiB: () => workerdRss(process.pid),
      workerdCpuMs: () => workerdCpu(process.pid),
      stop,
    };
  } catch (error) {
    // A set-up that fails leaves no workerd, bundle or state folder behind.
    await stop();
    throw error;
  }
}
