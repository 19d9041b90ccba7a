/**
 * Cold start: what the Worker's bundle costs a fresh isolate, for the bundle of this checkout
 * and for the one before the bundle's diet (BEFORE, built from that commit in a temporary
 * folder with the same node_modules), in one run on the same machine:
 *
 * 1. A fresh workerd process with the bundle's Worker alone (its Durable Objects and D1, no
 *    data): from Miniflare's start to the first `GET /health` answer — the process's spawn,
 *    the bundle's compile and the evaluation of its modules, and the first request. The floor
 *    is the same with a Worker of a few lines and the same bindings. Also workerd's CPU time by
 *    then, which the machine's other work does not inflate. STARTS processes of each,
 *    in turn.
 * 2. Fresh isolates in one workerd: for each bundle, a main Worker holding a small tenant (the
 *    demo agents, routed once, so its router object is warm) and ISOLATES more Workers of the
 *    same bundle (bench/lib/workerd-server.ts's probes: an isolate of their own, the main
 *    Worker's objects and D1). Each probe answers one first request, timed at the client:
 *    `GET /health`, or `POST /v1/route` for the small tenant. workerd evaluates a Worker's
 *    modules as it starts, so what this part sees is the first request's own work: code run,
 *    and compiled, for the first time.
 *
 * Medians, the lowest–highest, and the ratio now ÷ before.
 *
 * Run: npx tsx bench/cold-start.bench.ts   (COLD_START_STARTS, COLD_START_ISOLATES,
 * COLD_START_BEFORE to change the counts or the commit; BENCH_PORT the port it listens on)
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { unstable_readConfig } from "wrangler";
import { freePorts } from "./lib/free-port";
import { UNLIMITED_QUOTAS, workerdCpu } from "./lib/wrangler-dev";

type V4Options = Parameters<typeof convertV4MiniflareOptions>[0];

/** The parent of the first commit of the bundle's diet ("Import zod as a namespace"). */
const BEFORE = process.env.COLD_START_BEFORE ?? "9692d7f";
const STARTS = Number(process.env.COLD_START_STARTS ?? 7);
const ISOLATES = Number(process.env.COLD_START_ISOLATES ?? 7);
const KEY = "bench-cold-key";
const INPUT = "I was charged twice for my subscription";

const root = join(import.meta.dirname, "..");
const wrangler = join(root, "node_modules", ".bin", "wrangler");

interface Bundle {
  label: "before" | "now";
  tree: string;
  out: string;
  commit: string;
  kib: number;
  gzipKib: number;
}

function build(label: Bundle["label"], tree: string, commit: string): Bundle {
  const out = mkdtempSync(join(tmpdir(), `relay-cold-${label}-`));
  execFileSync(wrangler, ["deploy", "--dry-run", "--outdir", out], {
    cwd: tree,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true", WRANGLER_LOG: "error" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const code = readFileSync(join(out, "index.js"));
  return {
    label,
    tree,
    out,
    commit,
    kib: statSync(join(out, "index.js")).size / 1024,
    gzipKib: gzipSync(code).length / 1024,
  };
}

/** BEFORE's tree, from git, with this checkout's node_modules. */
function beforeTree(): string {
  const tree = mkdtempSync(join(tmpdir(), "relay-cold-tree-"));
  const tar = join(tree, "tree.tar");
  execFileSync("git", ["archive", "--format=tar", "-o", tar, BEFORE], { cwd: root });
  execFileSync("tar", ["-xf", tar, "-C", tree]);
  rmSync(tar);
  symlinkSync(join(root, "node_modules"), join(tree, "node_modules"));
  return tree;
}

const shortCommit = (ref: string) =>
  execFileSync("git", ["rev-parse", "--short", ref], { cwd: root }).toString().trim();

/** The Worker of a bundle, as Miniflare's classic options: its own objects, or `owner`'s. */
function workerOf(bundle: Bundle, name: string, owner?: string) {
  const config = unstable_readConfig({ config: join(bundle.tree, "wrangler.toml") });
  const bindings = config.durable_objects.bindings as { name: string; class_name: string }[];
  const databases: string[] = (config.d1_databases as { binding: string }[]).map((d) => d.binding);
  return {
    name,
    modules: true,
    modulesRoot: bundle.out,
    scriptPath: join(bundle.out, "index.js"),
    compatibilityDate: config.compatibility_date!,
    compatibilityFlags: config.compatibility_flags,
    d1Databases: Object.fromEntries(databases.map((d) => [d, `${bundle.label}-${d}`])),
    bindings: { ...(config.vars as Record<string, string>), RELAY_API_KEYS: `small:${KEY}`, ...UNLIMITED_QUOTAS },
    durableObjects: Object.fromEntries(
      bindings.map((b) => [
        b.name,
        { className: b.class_name, useSQLite: true, ...(owner === undefined ? {} : { scriptName: owner }) },
      ]),
    ),
    routes: [`${name}.bench/*`],
  };
}

/**
 * The floor: a Worker of a few lines with the same bindings as `bundle`'s (empty Durable Object
 * classes of the same names, the same D1 databases), so it starts the same services.
 */
function floorWorker(bundle: Bundle, dir: string) {
  const { routes: _, ...worker } = workerOf(bundle, "relay");
  const classes = Object.values(worker.durableObjects).map((o) => o.className);
  writeFileSync(
    join(dir, "index.js"),
    [
      `import { DurableObject } from "cloudflare:workers";`,
      ...classes.map((c) => `export class ${c} extends DurableObject {}`),
      `export default { fetch() { return new Response("ok"); } };`,
    ].join("\n"),
  );
  return { ...worker, modulesRoot: dir, scriptPath: join(dir, "index.js") };
}

/**
 * 1. From a fresh workerd's start to its first `/health` answer: the wall time, and workerd's CPU
 * time by then (/proc, 10 ms ticks), which a busy machine's other work does not inflate.
 */
async function startToFirstAnswer(port: number, worker: object): Promise<{ ms: number; cpuMs: number }> {
  const started = performance.now();
  const mf = new Miniflare({ ...convertV4MiniflareOptions({ host: "127.0.0.1", port, ...worker } as V4Options) });
  try {
    const url = (await mf.ready).toString().replace(/\/$/, "");
    const response = await fetch(`${url}/health`);
    await response.text();
    if (!response.ok) throw new Error(`/health: ${response.status}`);
    return { ms: performance.now() - started, cpuMs: workerdCpu(process.pid) };
  } finally {
    await mf.dispose();
  }
}

function migrate(tree: string): string[] {
  const dir = join(tree, "migrations");
  return execFileSync("ls", [dir])
    .toString()
    .split("\n")
    .filter((f) => f.endsWith(".sql"))
    .sort()
    .flatMap((file) =>
      readFileSync(join(dir, file), "utf8")
        .replace(/--.*$/gm, "")
        .split(/;\s*$/m)
        .map((s) => s.trim())
        .filter((s) => s.length > 0),
    );
}

/** 2. Fresh isolates' first requests, both bundles in one workerd. */
async function firstRequests(port: number, bundles: Bundle[]) {
  const names = (b: Bundle, kind: "health" | "route") =>
    Array.from({ length: ISOLATES }, (_, i) => `${b.label}-${kind}-${i + 1}`);
  const workers = bundles.flatMap((b) => [
    workerOf(b, b.label),
    ...[...names(b, "health"), ...names(b, "route")].map((n) => workerOf(b, n, b.label)),
  ]);
  const mf = new Miniflare(convertV4MiniflareOptions({ host: "127.0.0.1", port, workers }));
  const call = async (worker: string, path: string, init?: RequestInit) => {
    const started = performance.now();
    const response = await mf.dispatchFetch(`http://${worker}.bench${path}`, init as never);
    const text = await response.text();
    if (!response.ok) throw new Error(`${worker} ${path}: ${response.status} ${text.slice(0, 200)}`);
    return performance.now() - started;
  };
  const route = (worker: string) =>
    call(worker, "/v1/route", {
      method: "POST",
      headers: { Authorization: `Bearer ${KEY}`, "Content-Type": "application/json" },
      body: JSON.stringify({ input: INPUT }),
    });
  try {
    await mf.ready;
    for (const b of bundles) {
      const statements = migrate(b.tree);
      const config = unstable_readConfig({ config: join(b.tree, "wrangler.toml") });
      for (const d of config.d1_databases as { binding: string }[]) {
        const db = await mf.getD1Database(d.binding, b.label);
        for (const statement of statements) await db.prepare(statement).run();
      }
      for (const file of execFileSync("ls", [join(b.tree, "agents")])
        .toString()
        .split("\n")) {
        if (!file.endsWith(".md")) continue;
        await call(b.label, `/v1/agents/${file.slice(0, -3)}`, {
          method: "PUT",
          headers: { Authorization: `Bearer ${KEY}`, "Content-Type": "text/markdown" },
          body: readFileSync(join(b.tree, "agents", file), "utf8"),
        });
      }
      // The tenant's router object warm, and its background load let finish.
      await route(b.label);
      await call(b.label, "/v1/route/stats", { headers: { Authorization: `Bearer ${KEY}` } });
    }
    const out = Object.fromEntries(bundles.map((b) => [b.label, { health: [] as number[], route: [] as number[] }]));
    for (let i = 0; i < ISOLATES; i++) {
      // Alternating which bundle goes first, so neither always follows the other.
      for (const b of i % 2 === 0 ? bundles : [...bundles].reverse()) {
        out[b.label]!.health.push(await call(names(b, "health")[i]!, "/health"));
        out[b.label]!.route.push(await route(names(b, "route")[i]!));
      }
    }
    return out;
  } finally {
    await mf.dispose();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const range = (xs: number[]) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
const cell = (xs: number[]) => `${median(xs).toFixed(1)} (${range(xs)})`;

async function main(): Promise<void> {
  const [port] = await freePorts(1, Number(process.env.BENCH_PORT ?? 8860), Number(process.env.BENCH_PORT ?? 8860) + 4);
  const tree = beforeTree();
  const floorDir = mkdtempSync(join(tmpdir(), "relay-cold-floor-"));
  const bundles = [build("before", tree, shortCommit(BEFORE)), build("now", root, shortCommit("HEAD"))];
  const floor = floorWorker(bundles[1]!, floorDir);
  try {
    const starts = Object.fromEntries([...bundles.map((b) => [b.label, []]), ["floor", []]]) as Record<
      string,
      { ms: number; cpuMs: number }[]
    >;
    // One untimed start of each first: the first start after a build reads the files from disk.
    for (const b of bundles) await startToFirstAnswer(port!, workerOf(b, "relay"));
    await startToFirstAnswer(port!, floor);
    for (let i = 0; i < STARTS; i++) {
      for (const b of i % 2 === 0 ? bundles : [...bundles].reverse()) {
        const { routes: _, ...worker } = workerOf(b, "relay");
        starts[b.label]!.push(await startToFirstAnswer(port!, worker));
      }
      starts.floor!.push(await startToFirstAnswer(port!, floor));
    }
    const first = await firstRequests(port!, bundles);
    const [before, now] = bundles as [Bundle, Bundle];
    const ratio = (xs: number[], ys: number[]) => (median(ys) / median(xs)).toFixed(2);
    console.log(`\nCold start: ${STARTS} fresh processes and ${ISOLATES} fresh isolates of each bundle\n`);
    console.log(`| measure | before (${before.commit}) | now (${now.commit}) | now ÷ before |`);
    console.log("| --- | --- | --- | --- |");
    console.log(
      `| the bundle (\`wrangler deploy --dry-run\`'s index.js), KiB; gzip | ${before.kib.toFixed(0)}; ${before.gzipKib.toFixed(0)} | ${now.kib.toFixed(0)}; ${now.gzipKib.toFixed(0)} | ${(now.kib / before.kib).toFixed(2)}; ${(now.gzipKib / before.gzipKib).toFixed(2)} |`,
    );
    const ms = (label: string) => starts[label]!.map((r) => r.ms);
    const cpu = (label: string) => starts[label]!.map((r) => r.cpuMs);
    const less = (xs: number[], floor: number[]) => median(xs) - median(floor);
    console.log(
      `| a fresh workerd's start to its first \`/health\` answer, ms: median (lowest–highest) | ${cell(ms("before"))} | ${cell(ms("now"))} | ${ratio(ms("before"), ms("now"))} |`,
    );
    console.log(
      `| workerd's CPU by then, ms | ${cell(cpu("before"))} | ${cell(cpu("now"))} | ${ratio(cpu("before"), cpu("now"))} |`,
    );
    console.log(
      `| the same less the floor (a Worker of a few lines, the same bindings: ${cell(ms("floor"))}; CPU ${cell(cpu("floor"))}), ms: wall; CPU | ${less(ms("before"), ms("floor")).toFixed(1)}; ${less(cpu("before"), cpu("floor")).toFixed(0)} | ${less(ms("now"), ms("floor")).toFixed(1)}; ${less(cpu("now"), cpu("floor")).toFixed(0)} | ${(less(ms("now"), ms("floor")) / less(ms("before"), ms("floor"))).toFixed(2)}; ${(less(cpu("now"), cpu("floor")) / less(cpu("before"), cpu("floor"))).toFixed(2)} |`,
    );
    console.log(
      `| a fresh isolate's first \`GET /health\`, ms | ${cell(first.before!.health)} | ${cell(first.now!.health)} | ${ratio(first.before!.health, first.now!.health)} |`,
    );
    console.log(
      `| a fresh isolate's first \`POST /v1/route\` (5 agents, router object warm), ms | ${cell(first.before!.route)} | ${cell(first.now!.route)} | ${ratio(first.before!.route, first.now!.route)} |`,
    );
  } finally {
    for (const b of bundles) rmSync(b.out, { recursive: true, force: true });
    rmSync(tree, { recursive: true, force: true });
    rmSync(floorDir, { recursive: true, force: true });
  }
}

await main();
