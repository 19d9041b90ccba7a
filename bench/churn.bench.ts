/**
 * Registry churn at 10,000 agents (docs/scaling.md): 2 keywords, 1 pattern and 3 examples
 * each; one agent changed every second while 8 clients route. Relay on workerd through
 * Miniflare (bench/lib/workerd-server.ts), its state on tmpfs and kept between two starts:
 *
 * 1. The registry is written to D1 in bulk (as a restore or `npm run dev`'s set-up would), so
 *    the first route makes the tenant's router object build everything: the full build.
 * 2. workerd is stopped and started again on the same state: the first route of that fresh
 *    process (a fresh isolate and a fresh router object, which loads the built version from
 *    its storage) is timed from the client.
 * 3. Churn: 8 clients route for CHURN_SECONDS while one agent is replaced every second;
 *    route p99 beside `GET /health` p99 in the same run, and each change's compile time as
 *    the router object reports it (/v1/route/stats) — plus, since the Workers clock reads
 *    whole ms, the same part compiled in Node (V8).
 *
 * Run: npx tsx bench/churn.bench.ts   (CHURN_AGENTS, CHURN_SECONDS to change the size)
 */
import { rmSync } from "node:fs";
import { seededRandom } from "../src/lib/prng";
import { compileAgentPart } from "../src/routing/router-image";
import { AgentDefinition } from "../src/schemas/agent";
import { apiClient } from "./lib/api-client";
import { corpus } from "./lib/rules-synthetic-registry";
import { memoryStateFolder, startWorkerdServer } from "./lib/workerd-server";
import { percentile } from "./lib/wrangler-dev";

const AGENTS = Number(process.env.CHURN_AGENTS ?? 10_000);
const SECONDS = Number(process.env.CHURN_SECONDS ?? 30);
const CLIENTS = 8;
const KEY = "bench-churn-key";
const TENANT = "churn";

const words = corpus();
const sentence = (rand: ReturnType<typeof seededRandom>, n: number) =>
  Array.from({ length: n }, () => rand.pick(rand.int(2) === 0 ? words.vocabulary : words.filler)).join(" ");

/** Agent i of the registry (`version` > 0: a changed definition of it). */
function agent(i: number, version = 0): AgentDefinition {
  const rand = seededRandom(1000 + i + 7919 * version);
  return AgentDefinition.parse({
    name: `agent-${String(i).padStart(5, "0")}`,
    description: `synthetic agent ${i}`,
    triggers: {
      keywords: [rand.pick(words.vocabulary), rand.pick(words.vocabulary)],
      patterns: [`tk${i.toString(36)}-\\d{4}`],
      examples: [sentence(rand, 8), sentence(rand, 8), sentence(rand, 8)],
    },
  });
}

/** The registry straight into D1, 50 rows a batch, and the version bumped once. */
async function seed(db: D1Database): Promise<void> {
  const now = new Date().toISOString();
  for (let start = 0; start < AGENTS; start += 50) {
    const batch: D1PreparedStatement[] = [];
    for (let i = start; i < Math.min(AGENTS, start + 50); i++) {
      const definition = agent(i);
      batch.push(
        db
          .prepare(
            "INSERT OR REPLACE INTO agents (tenant, name, definition, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?4)",
          )
          .bind(TENANT, definition.name, JSON.stringify(definition), now),
      );
    }
    await db.batch(batch);
  }
  await db
    .prepare(
      `INSERT INTO registry_versions (tenant, version, stamp) VALUES (?1, 1, ?2)
       ON CONFLICT (tenant) DO UPDATE SET version = version + 1, stamp = excluded.stamp`,
    )
    .bind(TENANT, crypto.randomUUID())
    .run();
}

const port = () => 20_000 + Math.floor(Math.random() * 20_000);
const vars = { RELAY_API_KEYS: `dev:bench-dev-key,${TENANT}:${KEY}` };
const p99 = (xs: number[]) => percentile(xs, 99);
const p50 = (xs: number[]) => percentile(xs, 50);

async function main(): Promise<void> {
  const state = memoryStateFolder("relay-churn-");
  const started = performance.now();
  const rand = seededRandom(42);
  const routeInput = () =>
    `${rand.pick(words.vocabulary)} ${sentence(rand, 6)} tk${rand.int(AGENTS).toString(36)}-1234`;
  try {
    // 1. The full build.
    let server = await startWorkerdServer(port(), "bench-dev-key", vars, undefined, state, seed);
    let api = apiClient(server.url, KEY);
    let t = performance.now();
    const built = await api.ok("GET", "/v1/route/stats");
    const fullBuildClientMs = performance.now() - t;
    await server.stop();

    // 2. A fresh process on the same state: its first route.
    server = await startWorkerdServer(port(), "bench-dev-key", vars, undefined, state, undefined, false);
    api = apiClient(server.url, KEY);
    t = performance.now();
    const first = await api.ok("POST", "/v1/route", { input: routeInput(), strategy: "rule" });
    const firstRouteMs = performance.now() - t;
    const loaded = await api.ok("GET", "/v1/route/stats");
    t = performance.now();
    await api.ok("POST", "/v1/route", { input: routeInput(), strategy: "rule" });
    const warmRouteMs = performance.now() - t;

    // 3. Churn.
    const route: number[] = [];
    const health: number[] = [];
    const changes: { compile_ms: number; link_ms: number; build_ms: number; put_ms: number }[] = [];
    const staleAnswers = { count: 0 };
    let running = true;
    const clients = Array.from({ length: CLIENTS }, async (_, c) => {
      while (running) {
        const s = performance.now();
        if (c === 0) {
          await (await fetch(`${server.url}/health`)).text();
          health.push(performance.now() - s);
        } else {
          const d = await api.ok("POST", "/v1/route", { input: routeInput(), strategy: "rule" });
          route.push(performance.now() - s);
          if (d.registry_version < (changes.length > 0 ? built.registry_version + changes.length : 0))
            staleAnswers.count++;
        }
      }
    });
    const churnStarted = performance.now();
    for (let second = 1; second <= SECONDS; second++) {
      const i = rand.int(AGENTS);
      const s = performance.now();
      await api.ok("PUT", `/v1/agents/${agent(i).name}`, agent(i, second));
      const put_ms = performance.now() - s;
      const stats = await api.ok("GET", "/v1/route/stats");
      changes.push({ compile_ms: stats.compile_ms, link_ms: stats.link_ms, build_ms: stats.build_ms, put_ms });
      const wait = churnStarted + second * 1000 - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
    running = false;
    await Promise.all(clients);
    await server.stop();

    // One part in Node, where the clock reads fractions of a ms.
    const parts = Array.from({ length: 200 }, (_, k) => agent(k, 1));
    for (const a of parts) compileAgentPart(a);
    t = performance.now();
    for (const a of parts) compileAgentPart(a);
    const partNodeMs = (performance.now() - t) / parts.length;

    const max = (xs: number[]) => Math.max(...xs);
    const compile = changes.map((c) => c.compile_ms);
    const ok = (pass: boolean) => (pass ? "✅" : "❌");
    console.log(
      `# Churn at ${AGENTS} agents — ${new Date().toISOString().slice(0, 10)}, ${process.platform}/${process.arch}`,
    );
    console.log(
      `\n${AGENTS} agents (2 keywords, 1 pattern, 3 examples each) in ${built.shards} shards; ${SECONDS} changes, one a second, while ${CLIENTS - 1} clients route and 1 calls /health.\n`,
    );
    console.log("| measure | figure | target |");
    console.log("| --- | --- | --- |");
    console.log(
      `| full build (router object: parts + link of every shard), ms | ${built.build_ms} (compile ${built.compile_ms}, link ${built.link_ms}); client waited ${fullBuildClientMs.toFixed(0)} | printed |`,
    );
    console.log(
      `| fresh process's first route (router object loads from storage, isolate wraps), ms | ${firstRouteMs.toFixed(1)} (isolate load ${loaded.load_ms}; warm route ${warmRouteMs.toFixed(1)}) | ≤ 50 ${ok(firstRouteMs <= 50)} |`,
    );
    console.log(
      `| one changed agent compiled (router object), ms: p50 / max | ${p50(compile)} / ${max(compile)} | ≤ 20 ${ok(max(compile) <= 20)} |`,
    );
    console.log(`| one agent's part compiled in Node (V8), ms | ${partNodeMs.toFixed(3)} | — |`);
    console.log(
      `| its shard relinked, ms: p50 / max; whole change (PUT) p50 / max | ${p50(changes.map((c) => c.link_ms))} / ${max(changes.map((c) => c.link_ms))}; ${p50(changes.map((c) => c.put_ms)).toFixed(0)} / ${max(changes.map((c) => c.put_ms)).toFixed(0)} | — |`,
    );
    console.log(
      `| route p99 / health p99 during churn, ms | ${p99(route).toFixed(2)} / ${p99(health).toFixed(2)} = ${(p99(route) / p99(health)).toFixed(2)}× (p50 ${p50(route).toFixed(2)} / ${p50(health).toFixed(2)}; ${route.length} routes) | ≤ 3× ${ok(p99(route) <= 3 * p99(health))} |`,
    );
    console.log(
      `| first route's decision | ${first.method}, agent ${first.agent}, version ${first.registry_version} | — |`,
    );
    console.log(`\nTotal ${((performance.now() - started) / 1000).toFixed(0)} s.`);
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
}

await main();
