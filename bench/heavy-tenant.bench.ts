/**
 * Heavy tenant: the worst pattern set the pattern budget admits, routed with the largest input
 * by 8 clients, beside another tenant's `POST /v1/route` and `GET /health` (docs/scaling.md,
 * "The work budget"). Relay on workerd through Miniflare (bench/lib/workerd-server.ts), state
 * in memory. Three phases in one run, the probes the same in each:
 *
 *   idle      — the probes alone;
 *   baseline  — the probes beside the same load without the heavy tenant: 8 clients routing
 *               the same largest input for the other tenant (demo agents, a few small patterns);
 *   heavy     — the probes beside 8 clients routing it for the heavy tenant.
 *
 * Target: each probe's p99 under `heavy` ≤ 1.5 × under `baseline`. Also printed: the worst
 * case of the pattern tier alone in Node (V8, the engine workerd runs), the figure
 * docs/scaling.md states. Run: npx tsx bench/heavy-tenant.bench.ts
 */
import { compileRules, PATTERN_BUDGET, PATTERN_PREFIX } from "../src/routing/rules";
import { AgentDefinition } from "../src/schemas/agent";
import { MAX_INPUT_BYTES } from "../src/schemas/routing";
import { apiClient } from "./lib/api-client";
import { startWorkerdServer } from "./lib/workerd-server";
import { percentile } from "./lib/wrangler-dev";

const CLIENTS = 8;
const PROBES = Number(process.env.HEAVY_PROBES ?? 300);
const OTHER_KEY = "bench-other-key";
const HEAVY_KEY = "bench-heavy-key";

/**
 * `(.*a){k}[^a]` keeps every state of its program alive on a run of a's and never matches
 * there: 4k + 2 instructions of work per code unit read. Largest first, 100 per agent, until
 * the budget is full.
 */
export function worstPatternSet(budget = PATTERN_BUDGET): AgentDefinition[] {
  const agents: AgentDefinition[] = [];
  let patterns: string[] = [];
  let used = 0;
  for (let k = 249; k >= 1 && used + 4 * k + 2 <= budget; ) {
    patterns.push(`(.*a){${k}}[^a]`);
    used += 4 * k + 2;
    if (patterns.length === 100) {
      agents.push(AgentDefinition.parse({ name: `heavy-${agents.length}`, triggers: { patterns, priority: 100 } }));
      patterns = [];
    }
    // Each k once per agent; the next agent starts from the top again.
    k = patterns.length === 0 ? 249 : k - 1;
  }
  if (patterns.length > 0)
    agents.push(AgentDefinition.parse({ name: `heavy-${agents.length}`, triggers: { patterns, priority: 100 } }));
  return agents;
}

/** The pattern tier alone on the worst input, in Node: ms per route (median of 5 after a warm-up). */
function patternTierWorstCase(agents: AgentDefinition[], input: string): { ms: number; instructions: number } {
  const rules = compileRules(agents);
  rules.match(input);
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    rules.match(input);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { ms: times[2]!, instructions: rules.stats.patternInstructions };
}

interface Probes {
  route: number[];
  health: number[];
}

/** The probes, one after the other (a user's requests), while `load` runs. */
async function probe(base: string, load: () => Promise<void>): Promise<Probes> {
  const other = apiClient(base, OTHER_KEY);
  const out: Probes = { route: [], health: [] };
  let running = true;
  const clients = Array.from({ length: CLIENTS }, async () => {
    while (running) await load();
  });
  await new Promise((resolve) => setTimeout(resolve, 200));
  for (let i = 0; i < PROBES; i++) {
    let started = performance.now();
    await other.ok("POST", "/v1/route", { input: "I was charged twice for my subscription", strategy: "rule" });
    out.route.push(performance.now() - started);
    started = performance.now();
    await (await fetch(`${base}/health`)).text();
    out.health.push(performance.now() - started);
  }
  running = false;
  await Promise.all(clients);
  return out;
}

async function main(): Promise<void> {
  const agents = worstPatternSet();
  const largest = "a".repeat(MAX_INPUT_BYTES);
  const worst = patternTierWorstCase(agents, largest);
  const server = await startWorkerdServer(20_000 + Math.floor(Math.random() * 20_000), OTHER_KEY, {
    RELAY_API_KEYS: `dev:${OTHER_KEY},heavy:${HEAVY_KEY}`,
  });
  try {
    const heavy = apiClient(server.url, HEAVY_KEY);
    const other = apiClient(server.url, OTHER_KEY);
    for (const agent of agents) await heavy.ok("PUT", `/v1/agents/${agent.name}`, agent);
    const stats = await heavy.ok("GET", "/v1/route/stats");
    let heavyRoutes = 0;
    const heavyRoute = async () => {
      await heavy.ok("POST", "/v1/route", { input: largest, strategy: "rule" });
      heavyRoutes++;
    };
    const baselineRoute = async () => {
      await other.ok("POST", "/v1/route", { input: largest, strategy: "rule" });
    };
    const started = performance.now();
    const idle = await probe(server.url, async () => new Promise((resolve) => setTimeout(resolve, 50)));
    const baseline = await probe(server.url, baselineRoute);
    const heavyStarted = performance.now();
    const loaded = await probe(server.url, heavyRoute);
    const heavySeconds = (performance.now() - heavyStarted) / 1000;
    const p99 = (xs: number[]) => percentile(xs, 99);
    const row = (name: string, pick: (p: Probes) => number[]) => {
      const ratio = p99(pick(loaded)) / p99(pick(baseline));
      console.log(
        `| ${name} | ${p99(pick(idle)).toFixed(2)} | ${p99(pick(baseline)).toFixed(2)} | ${p99(pick(loaded)).toFixed(2)} | ${ratio.toFixed(2)}× ${ratio <= 1.5 ? "✅" : "❌"} | ${(p99(pick(loaded)) / p99(pick(idle))).toFixed(2)}× |`,
      );
    };
    console.log(
      `# Heavy tenant — ${new Date().toISOString().slice(0, 10)}, ${process.platform}/${process.arch}, Node ${process.version}`,
    );
    console.log(
      `\nHeavy tenant: ${agents.length} agents, ${stats.pattern_budget.used} of ${stats.pattern_budget.limit} pattern instructions (\`(.*a){k}[^a]\`, k ≤ 249), input ${MAX_INPUT_BYTES} × "a" (the pattern tier reads ${PATTERN_PREFIX}); ${CLIENTS} clients; ${PROBES} probes of each kind per phase.`,
    );
    console.log(
      `Pattern tier alone on that input, Node (V8): ${worst.ms.toFixed(1)} ms per route for ${worst.instructions} instructions × ${PATTERN_PREFIX} code units (${((worst.ms * 1e6) / (worst.instructions * PATTERN_PREFIX)).toFixed(2)} ns per instruction step).`,
    );
    console.log(
      `Heavy routes served during the heavy phase: ${heavyRoutes} (${(heavyRoutes / heavySeconds).toFixed(1)}/s).\n`,
    );
    console.log(
      "| probe (other tenant) | p99 idle, ms | p99 beside baseline load, ms | p99 beside heavy load, ms | heavy / baseline (≤ 1.5×) | heavy / idle |",
    );
    console.log("| --- | --- | --- | --- | --- | --- |");
    row("POST /v1/route", (p) => p.route);
    row("GET /health", (p) => p.health);
    console.log(
      `\nTotal ${((performance.now() - started) / 1000).toFixed(0)} s; workerd RSS ${server.workerdRssMiB()} MiB.`,
    );
  } finally {
    await server.stop();
  }
}

await main();
