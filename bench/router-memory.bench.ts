/**
 * A loaded router's memory (docs/scaling.md, "Memory"): the churn bench's registry (2 keywords,
 * 1 pattern, 3 examples an agent) at 1,000 and 10,000 agents, built as the router object builds
 * it (parts, shards, link), its shards packed as an isolate receives them, then decoded and
 * wrapped as an isolate's load does. For each size it prints the count a router reports
 * (`memory_bytes` of `GET /v1/route/stats`), its parts, and beside it what the process's heap
 * and array buffers grew by from before the shards were packed until the router was loaded, the
 * packed buffers dropped (after forced collections): the count is honest when the two agree.
 *
 * Then one isolate serving three 10,000-agent tenants in turn, twice round: Relay on workerd
 * through Miniflare's API (bench/lib/workerd-server.ts; the Worker and the router objects share
 * one isolate there, as they may in production, and one router budget), each tenant's registry
 * written to D1 in bulk. For each turn: a route (answered by the tenant's router object while
 * the isolate holds none), `GET /v1/route/stats` (which waits for the isolate's load) for the
 * router's memory and the isolate's router budget, and the isolate's JS heap in use (workerd's
 * inspector; garbage included, and the router objects' own build state: locally they run in the
 * same isolate). The held routers must stay within the budget, and a tenant whose router was
 * let go must decide its input the same (candidates and confidences) when it comes round again.
 *
 * Run: npx tsx --expose-gc bench/router-memory.bench.ts   (ROUTER_MEMORY_SIZES=1000,10000;
 * ROUTER_MEMORY_TENANT_AGENTS=10000 the tenants' size, 0 to skip the isolate part). Ports 8870–8879.
 */

import { rmSync } from "node:fs";
import { type CompiledPart, linkShard, shardBudgets, shardCount, shardOf } from "../src/routing/router-build";
import { decodeShard, encodeShard, packSections, unpackSections } from "../src/routing/router-codec";
import { type AgentPart, compileAgentPart } from "../src/routing/router-image";
import { routerFromShards, wrapShard } from "../src/routing/rule-router";
import { apiClient } from "./lib/api-client";
import { churnAgent, seedChurnTenant } from "./lib/churn-registry";
import { freePorts } from "./lib/free-port";
import { inspector } from "./lib/inspector";
import { memoryStateFolder, startWorkerdServer } from "./lib/workerd-server";

const SIZES = (process.env.ROUTER_MEMORY_SIZES ?? "1000,10000").split(",").map(Number);
/** The target for a loaded 10,000-agent router. */
const TARGET_MB = 32;

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with --expose-gc: npx tsx --expose-gc bench/router-memory.bench.ts");

function heldBytes(): number {
  gc!();
  gc!();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** The shards of `agents` agents packed as the router object sends them. */
function packedShards(agents: number): Uint8Array[] {
  const parts = new Map<string, CompiledPart>();
  for (let i = 0; i < agents; i++) {
    const agent = churnAgent(i);
    parts.set(agent.name, { text: "", part: compileAgentPart(agent), compile_ms: 0 });
  }
  const shards = shardCount(parts.size);
  const budgets = shardBudgets(parts, shards);
  const byShard: AgentPart[][] = Array.from({ length: shards }, () => []);
  for (const [name, { part }] of parts) byShard[shardOf(name, shards)]!.push(part);
  return byShard.map((ps, k) => packSections(encodeShard(linkShard(ps, budgets[k]!, shards))));
}

const MB = (bytes: number) => (bytes / 1e6).toFixed(1);
const rows: string[] = [];
const partRows: string[] = [];
let tenK: number | null = null;
for (const agents of SIZES) {
  // Measured from before the shards are packed: a buffer a load received and still holds counts.
  const before = heldBytes();
  let packed = packedShards(agents);
  const packedBytes = packed.reduce((sum, p) => sum + p.byteLength, 0);
  // As an isolate's load: each shard decoded from its buffer and wrapped, then the router over them.
  const wrapped = packed.map((p) => wrapShard(decodeShard(unpackSections(p))));
  packed = [];
  const router = routerFromShards(wrapped);
  router.decide("warm the scratch up tk1-1234");
  const grown = heldBytes() - before;
  let rules = 0;
  let classifier = 0;
  let automaton = 0;
  const parts = { vocabulary: 0, model: 0, postings: 0, texts: 0, examples: 0 };
  for (const w of wrapped) {
    rules += w.rules.stats.memoryBytes;
    automaton += w.rules.automatonBytes;
    classifier += w.classifier?.memoryBytes ?? 0;
    for (const k of Object.keys(parts) as (keyof typeof parts)[]) parts[k] += w.classifier?.memoryParts[k] ?? 0;
  }
  partRows.push(
    `| ${agents.toLocaleString("en")} | ${MB(automaton)} | ${MB(rules - automaton)} | ${MB(parts.vocabulary)} | ${MB(parts.model)} | ${MB(parts.postings)} | ${MB(parts.texts)} | ${MB(parts.examples)} |`,
  );
  if (agents === 10_000) tenK = router.memoryBytes;
  rows.push(
    `| ${agents.toLocaleString("en")} | ${wrapped.length} | ${MB(packedBytes)} | **${MB(router.memoryBytes)}** | ${MB(rules)} | ${MB(classifier)} | ${MB(router.memoryBytes - rules - classifier)} | ${MB(grown)} |`,
  );
  // Kept alive until measured.
  if (router.agents.length !== agents) throw new Error("the router lost agents");
}

console.log(
  `# Router memory — ${new Date().toISOString().slice(0, 10)}, ${process.platform}/${process.arch}, Node ${process.version}\n`,
);
console.log("The churn registry (2 keywords, 1 pattern, 3 examples an agent), loaded as an isolate loads it.\n");
console.log(
  "| agents | shards | packed, MB | memory_bytes, MB | rule tier | classifiers | agent lists, per-agent arrays | heap + array buffers grown, MB |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const row of rows) console.log(row);
console.log("\nThe rule tier and the classifiers by part, MB:\n");
console.log(
  "| agents | automaton | rest of the rule tier (keywords, patterns, names, scanner) | feature tables | models | postings (offsets, examples, weights, flags) | texts | per example (agent, scratch) |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const row of partRows) console.log(row);
if (tenK !== null)
  console.log(
    `\nA loaded 10,000-agent router: ${MB(tenK)} MB, target ≤ ${TARGET_MB} MB ${tenK <= TARGET_MB * 1e6 ? "✅ met" : "❌ MISSED"}`,
  );

/** Three tenants of TENANT_AGENTS agents, served in turn by one isolate, twice round. */
const TENANT_AGENTS = Number(process.env.ROUTER_MEMORY_TENANT_AGENTS ?? 10_000);
const TENANTS = ["mem-a", "mem-b", "mem-c"];
const keyOf = (tenant: string) => `bench-${tenant}-key`;

async function isolateInTurn(): Promise<void> {
  const [port, inspectorPort] = await freePorts(2, 8870, 8879);
  const state = memoryStateFolder("relay-router-memory-");
  const vars = { RELAY_API_KEYS: ["dev:bench-dev-key", ...TENANTS.map((t) => `${t}:${keyOf(t)}`)].join(",") };
  const seed = async (db: D1Database) => {
    for (const tenant of TENANTS) await seedChurnTenant(db, tenant, TENANT_AGENTS);
  };
  const server = await startWorkerdServer(port!, "bench-dev-key", vars, inspectorPort, state, seed);
  try {
    const devtools = await inspector(inspectorPort!);
    const heapMB = async () => ((await devtools.send("Runtime.getHeapUsage")) as { usedSize: number }).usedSize / 1e6;
    const input = `${churnAgent(7).triggers.examples[0]} tk7-1234`;
    const rows: string[] = [];
    const decided = new Map<string, string>();
    let maxHeld = 0;
    let budget = 0;
    let same = true;
    for (let round = 1; round <= 2; round++) {
      for (const tenant of TENANTS) {
        const api = apiClient(server.url, keyOf(tenant));
        const started = performance.now();
        const first = await api.ok("POST", "/v1/route", { input, strategy: "rule", config: { fallback: "none" } });
        const firstMs = performance.now() - started;
        const stats = await api.ok("GET", "/v1/route/stats");
        const routed = await api.ok("POST", "/v1/route", { input, strategy: "rule", config: { fallback: "none" } });
        const decisionOf = (d: typeof routed) =>
          JSON.stringify([
            d.agent,
            d.method,
            d.confidence,
            d.candidates.map((c: { agent: string; confidence: number }) => [c.agent, c.confidence]),
          ]);
        const decision = decisionOf(routed);
        if (decisionOf(first) !== decision) same = false;
        if (decided.has(tenant) && decided.get(tenant) !== decision) same = false;
        decided.set(tenant, decision);
        const after = await api.ok("GET", "/v1/route/stats");
        budget = after.router_budget.bytes;
        maxHeld = Math.max(maxHeld, stats.router_budget.held_bytes, after.router_budget.held_bytes);
        rows.push(
          `| ${round} | ${tenant} | ${firstMs.toFixed(0)} | ${MB(stats.memory_bytes)} | ${stats.load_ms} | ${after.router_budget.held ? "yes" : "no"} | ${MB(after.router_budget.held_bytes)} | ${(await heapMB()).toFixed(1)} | ${routed.candidates[0]?.agent ?? "—"} ${routed.candidates[0]?.confidence ?? ""} |`,
        );
      }
    }
    devtools.close();
    console.log(
      `
## One isolate, three ${TENANT_AGENTS.toLocaleString("en")}-agent tenants in turn (workerd; Worker and router objects in one isolate)
`,
    );
    console.log(
      "| round | tenant | first route, ms (round 1: the object builds first) | its router, MB | isolate's load, ms | held after its turn | routers held in the isolate, MB | isolate JS heap in use (garbage included), MB | best candidate |",
    );
    console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for (const row of rows) console.log(row);
    console.log(
      `
Routers held in the isolate: at most ${MB(maxHeld)} MB, budget ${MB(budget)} MB ${maxHeld <= budget ? "✅ within" : "❌ PAST IT"}; each tenant decided the same every turn ${same ? "✅" : "❌ NO"}`,
    );
  } finally {
    await server.stop();
    rmSync(state, { recursive: true, force: true });
  }
}

if (TENANT_AGENTS > 0) await isolateInTurn();
