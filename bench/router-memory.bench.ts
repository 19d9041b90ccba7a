/**
 * A loaded router's memory (docs/scaling.md, "Memory"): the churn bench's registry (2 keywords,
 * 1 pattern, 3 examples an agent) at 1,000 and 10,000 agents, built as the router object builds
 * it (parts, shards, link), its shards packed as an isolate receives them, then decoded and
 * wrapped as an isolate's load does. For each size it prints the count a router reports
 * (`memory_bytes` of `GET /v1/route/stats`), its parts, and beside it what the process's heap
 * and array buffers grew by from before the shards were packed until the router was loaded, the
 * packed buffers dropped (after forced collections): the count is honest when the two agree.
 *
 * Run: npx tsx --expose-gc bench/router-memory.bench.ts   (ROUTER_MEMORY_SIZES=1000,10000)
 */
import { type CompiledPart, linkShard, shardBudgets, shardCount, shardOf } from "../src/routing/router-build";
import { decodeShard, encodeShard, packSections, unpackSections } from "../src/routing/router-codec";
import { type AgentPart, compileAgentPart } from "../src/routing/router-image";
import { routerFromShards, wrapShard } from "../src/routing/rule-router";
import { churnAgent } from "./lib/churn-registry";

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
  for (const w of wrapped) {
    rules += w.rules.stats.memoryBytes;
    classifier += w.classifier?.memoryBytes ?? 0;
  }
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
if (tenK !== null)
  console.log(
    `\nA loaded 10,000-agent router: ${MB(tenK)} MB, target ≤ ${TARGET_MB} MB ${tenK <= TARGET_MB * 1e6 ? "✅ met" : "❌ MISSED"}`,
  );
