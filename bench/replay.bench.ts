/**
 * Routing replay (docs/routing.md, Replay): REPLAY_INPUTS recorded inputs (default 10,000, the
 * history's size) replayed against a draft of a 1,000-agent registry with REPLAY_CHANGED agents
 * changed (each given another agent's keywords), beside `GET /health` under the same load. Relay on workerd through Miniflare
 * (bench/lib/workerd-server.ts), state on tmpfs:
 *
 * 1. The registry is written to D1 in bulk (the synthetic registry of the rule-tier bench,
 *    bench/lib/rules-synthetic-registry.ts) with a default agent as fallback, so every session
 *    is routed; REPLAY_INPUTS sessions are then created through the API, 8 at a time, which
 *    records their inputs in the tenant's routing history the way production does.
 * 2. `GET /health` alone, one request after another: the idle floor.
 * 3. REPLAY_ROUNDS replays of the whole history, one after another, while the same `GET
 *    /health` probes run: each replay's client time and the server's build/replay split, the
 *    probes' p50/p99 beside the idle ones, and the isolate's JS heap (through the inspector)
 *    before, at its highest while replays ran (sampled every 50 ms) and after.
 *
 * Run: npx tsx bench/replay.bench.ts   (REPLAY_INPUTS=200 for a quick check)
 */
import { seededRandom } from "../src/lib/prng";
import type { AgentDefinition } from "../src/schemas/agent";
import { apiClient } from "./lib/api-client";
import { inspector } from "./lib/inspector";
import { corpus, registry } from "./lib/rules-synthetic-registry";
import { memoryStateFolder, startWorkerdServer } from "./lib/workerd-server";
import { percentile, runConcurrent } from "./lib/wrangler-dev";

const AGENTS = 1_000;
const INPUTS = Number(process.env.REPLAY_INPUTS ?? 10_000);
const CHANGED = Number(process.env.REPLAY_CHANGED ?? 10);
const ROUNDS = Number(process.env.REPLAY_ROUNDS ?? 3);
const PROBES_IDLE = 300;
const TENANT = "replay";
const KEY = "bench-replay-key";
const INSPECTOR_PORT = 9234;
const MiB = 1024 * 1024;

const words = corpus();
const agents = registry(AGENTS, words);
/** The agents customers' inputs are about (a tenth of the registry, as traffic concentrates). */
const popular = agents.slice(0, AGENTS / 10);

/** The registry straight into D1, 50 rows a batch, and its version set once. */
async function seed(db: D1Database): Promise<void> {
  const now = new Date().toISOString();
  for (let start = 0; start < agents.length; start += 50) {
    await db.batch(
      agents
        .slice(start, start + 50)
        .map((a) =>
          db
            .prepare(
              "INSERT INTO agents (tenant, name, definition, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?4)",
            )
            .bind(TENANT, a.name, JSON.stringify(a), now),
        ),
    );
  }
  await db
    .prepare("INSERT INTO registry_versions (tenant, version, stamp) VALUES (?1, 1, ?2)")
    .bind(TENANT, crypto.randomUUID())
    .run();
}

/** An input like a customer's: filler words, a keyword or more of a popular agent, and that agent's order code. */
function customerInput(rand: ReturnType<typeof seededRandom>): string {
  const pieces = Array.from({ length: 6 + rand.int(10) }, () => rand.pick(words.filler));
  const k = rand.int(popular.length);
  for (let n = 1 + rand.int(3); n > 0; n--)
    pieces.splice(rand.int(pieces.length), 0, rand.pick(popular[k]!.triggers.keywords));
  pieces.push(`tk${k.toString(36)}-${1000 + rand.int(9000)}`);
  return pieces.join(" ");
}

/**
 * The draft: CHANGED agents outside the popular ones, each given every keyword and the order-code
 * pattern of a popular agent at the top priority (it takes some of that agent's inputs).
 */
function draftAgents(rand: ReturnType<typeof seededRandom>): AgentDefinition[] {
  return Array.from({ length: CHANGED }, (_, i) => {
    const agent = agents[AGENTS / 2 + i]!;
    const other = rand.pick(popular);
    return {
      ...agent,
      triggers: {
        ...agent.triggers,
        keywords: [...agent.triggers.keywords, ...other.triggers.keywords],
        priority: 100,
      },
    };
  });
}

async function main(): Promise<void> {
  const state = memoryStateFolder("relay-replay-");
  const server = await startWorkerdServer(
    20_000 + Math.floor(Math.random() * 20_000),
    "bench-dev-key",
    { RELAY_API_KEYS: `dev:bench-dev-key,${TENANT}:${KEY}` },
    INSPECTOR_PORT,
    state,
    seed,
  );
  const devtools = await inspector(INSPECTOR_PORT);
  const heapMiB = async () => ((await devtools.send("Runtime.getHeapUsage")) as { usedSize: number }).usedSize / MiB;
  try {
    const api = apiClient(server.url, KEY);
    const rand = seededRandom(7);
    await api.ok("PUT", "/v1/config/routing", {
      strategy: "rule",
      fallback: "default_agent",
      default_agent: agents[0]!.name,
    });
    let t = performance.now();
    await api.ok("GET", "/v1/route/stats");
    const buildS = (performance.now() - t) / 1000;
    t = performance.now();
    const inputs = Array.from({ length: INPUTS }, () => customerInput(rand));
    await runConcurrent(INPUTS, 8, async (i) => {
      await api.ok("POST", "/v1/sessions", { input: inputs[i] });
    });
    const sessionsS = (performance.now() - t) / 1000;
    // The records go after each answer: wait until the history holds them all.
    const draft = { agents: draftAgents(rand) };
    const body = { draft, history: { limit: INPUTS } };
    for (let tries = 0; ; tries++) {
      const held = (await api.ok("POST", "/v1/route/replay", { draft: {}, history: { limit: INPUTS } })).totals.inputs;
      if (held === INPUTS) break;
      if (tries === 100) throw new Error(`the history holds ${held} of ${INPUTS} inputs`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    const health = async (out: number[]) => {
      const started = performance.now();
      await (await fetch(`${server.url}/health`)).text();
      out.push(performance.now() - started);
    };
    const idle: number[] = [];
    for (let i = 0; i < PROBES_IDLE; i++) await health(idle);

    const heapBefore = await heapMiB();
    let heapMax = heapBefore;
    let running = true;
    const sampler = (async () => {
      while (running) {
        heapMax = Math.max(heapMax, await heapMiB());
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const beside: number[] = [];
    const prober = (async () => {
      while (running) await health(beside);
    })();
    const rounds: { ms: number; build: number; replay: number; moved: number; complete: boolean }[] = [];
    let report: any = null;
    for (let r = 0; r < ROUNDS; r++) {
      const started = performance.now();
      report = await api.ok("POST", "/v1/route/replay", body);
      rounds.push({
        ms: performance.now() - started,
        build: report.timings.build_ms,
        replay: report.timings.replay_ms,
        moved: report.totals.moved,
        complete: report.totals.complete,
      });
    }
    running = false;
    await Promise.all([sampler, prober]);
    const heapAfter = await heapMiB();

    const f = (n: number) => n.toFixed(1);
    console.log(
      `# Routing replay — ${new Date().toISOString().slice(0, 10)}, ${process.platform}/${process.arch}, Node ${process.version}`,
    );
    console.log(
      `\n${AGENTS} agents (the rule-tier bench's synthetic registry), ${CHANGED} changed in the draft; ${INPUTS} recorded inputs (${f(sessionsS)} s to create the sessions; first build ${f(buildS)} s).\n`,
    );
    console.log("| replay | client ms | server build_ms | server replay_ms | moved | complete |");
    console.log("| --- | --- | --- | --- | --- | --- |");
    for (const [i, x] of rounds.entries())
      console.log(`| ${i + 1} | ${x.ms.toFixed(0)} | ${x.build} | ${x.replay} | ${x.moved} | ${x.complete} |`);
    console.log(
      `\nLargest moves: ${(report.moves as { from: string; to: string; count: number }[])
        .slice(0, 3)
        .map((m) => `${m.from} → ${m.to} (${m.count})`)
        .join(", ")}.`,
    );
    console.log("\n| GET /health | p50, ms | p99, ms | probes |\n| --- | --- | --- | --- |");
    console.log(`| idle | ${percentile(idle, 50).toFixed(2)} | ${percentile(idle, 99).toFixed(2)} | ${idle.length} |`);
    console.log(
      `| beside the replays | ${percentile(beside, 50).toFixed(2)} | ${percentile(beside, 99).toFixed(2)} | ${beside.length} |`,
    );
    console.log(
      `\nIsolate JS heap: ${f(heapBefore)} MiB before, ${f(heapMax)} MiB at most during the replays (sampled every 50 ms), ${f(heapAfter)} MiB after; workerd RSS ${server.workerdRssMiB()} MiB.`,
    );
  } finally {
    devtools.close();
    await server.stop();
  }
}

await main();
