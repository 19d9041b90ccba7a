/**
 * Routing quality of the rule tier on CLINC150 (docs/benchmarks.md), run as `npx tsx bench/routing-quality.ts`
 * (`npm run bench:routing`). Data: CLINC150 by Larson et al., 2019, CC BY 3.0, read from
 * CLINC150_DIR, by default ../shared/datasets/clinc150 beside the repository (see bench/lib/clinc.ts).
 *
 * Ten agents, one per domain; examples are train's in-scope utterances of the domain; no
 * keywords or patterns (the "+ keywords" row adds 10 derived keywords per domain, see
 * bench/lib/registries.ts). Everything is measured on `val`, which nothing was trained or tuned
 * on; the confidence calibration was fitted on train (bench/fit-calibration.ts).
 * Route timings are V8 in Node (the engine workerd runs; workerd's clock does not advance while
 * code runs, so per-route µs cannot be read inside it), after a warm-up pass. Compile time is
 * measured both in Node and inside workerd (bench/lib/workerd-compile.ts).
 */
import { type CompiledRuleRouter, compileRuleRouter } from "../src/routing/rule-router";
import type { AgentDefinition } from "../src/schemas/agent";
import { CLINC_CREDIT, type ClincRow, examplesByDomain, loadClincOrExit } from "./lib/clinc";
import { deriveKeywords, domainAgents } from "./lib/registries";
import { compileInWorkerd } from "./lib/workerd-compile";

const THRESHOLD = 80;

interface Quality {
  accuracy: number;
  coverage: number;
  precision: number;
  declined: number;
}

function quality(router: CompiledRuleRouter, val: readonly ClincRow[]): Quality {
  let inScope = 0;
  let correct = 0;
  let decided = 0;
  let decidedCorrect = 0;
  let oos = 0;
  let declined = 0;
  for (const r of val) {
    const d = router.decide(r.text);
    const sure = d.agent !== null && d.confidence >= THRESHOLD;
    if (r.domain === "oos") {
      oos++;
      if (!sure) declined++;
      continue;
    }
    inScope++;
    if (d.candidates[0]?.agent === r.domain) correct++;
    if (sure) {
      decided++;
      if (d.agent === r.domain) decidedCorrect++;
    }
  }
  return {
    accuracy: correct / inScope,
    coverage: decided / inScope,
    precision: decided === 0 ? 1 : decidedCorrect / decided,
    declined: declined / oos,
  };
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
}

/**
 * Per-route µs over five timed passes after one warm-up pass: p50 and p99 of every call, and
 * the p99 of each input's median over the passes (what the code costs, with the scheduling
 * noise of a shared machine filtered out).
 */
function latency(
  router: CompiledRuleRouter,
  inputs: readonly string[],
  explain: boolean,
): { p50: number; p99: number; p99Median: number } {
  const run = (s: string) => {
    const d = router.decide(s);
    if (explain) JSON.stringify(d);
  };
  for (const s of inputs) run(s);
  const passes = 5;
  const perInput = inputs.map(() => new Array<number>(passes));
  for (let pass = 0; pass < passes; pass++) {
    inputs.forEach((s, i) => {
      const t0 = performance.now();
      run(s);
      (perInput[i] as number[])[pass] = (performance.now() - t0) * 1000;
    });
  }
  const all = perInput.flat().sort((a, b) => a - b);
  const medians = perInput.map((t) => [...t].sort((a, b) => a - b)[passes >> 1] as number).sort((a, b) => a - b);
  return { p50: percentile(all, 0.5), p99: percentile(all, 0.99), p99Median: percentile(medians, 0.99) };
}

/** Compile time in ms: the median of three compiles (the first includes JIT warm-up). */
function compileTime(agents: AgentDefinition[]): { ms: number; first: number; router: CompiledRuleRouter } {
  const times: number[] = [];
  let router: CompiledRuleRouter | null = null;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    router = compileRuleRouter(agents);
    times.push(performance.now() - t0);
  }
  const first = times[0] as number;
  times.sort((a, b) => a - b);
  return { ms: times[1] as number, first, router: router as CompiledRuleRouter };
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const mark = (ok: boolean) => (ok ? "✅" : "❌");

async function main(): Promise<void> {
  const started = performance.now();
  const { train, val, domains: domainMap } = loadClincOrExit();
  const domains = Object.keys(domainMap);
  const inScopeVal = val.filter((r) => r.domain !== "oos");
  console.log(`# Rule-tier routing quality — ${CLINC_CREDIT}\n`);
  console.log(
    `10 agents (one per domain), examples from \`train\`; measured on \`val\` (${inScopeVal.length} in-scope, ${val.length - inScopeVal.length} out-of-scope). Threshold ${THRESHOLD}.\n`,
  );

  const full = compileTime(domainAgents(domains, examplesByDomain(train)));
  const few = compileTime(domainAgents(domains, examplesByDomain(train, 10)));
  const withKw = compileRuleRouter(domainAgents(domains, examplesByDomain(train), deriveKeywords(train)));
  const kwOnly = compileRuleRouter(domainAgents(domains, new Map(), deriveKeywords(train)));
  const qFull = quality(full.router, val);
  const qFew = quality(few.router, val);
  const qKw = quality(withKw, val);
  const qKwOnly = quality(kwOnly, val);
  const inputs = val.map((r) => r.text);
  const lat = latency(full.router, inputs, false);
  const latX = latency(full.router, inputs, true);
  let workerd = "not measured";
  let workerdMs = Infinity;
  try {
    const w = await compileInWorkerd(domainAgents(domains, examplesByDomain(train)));
    workerdMs = [...w.ms].sort((a, b) => a - b)[1] ?? Infinity;
    workerd = `${workerdMs} (${w.ms.join(", ")})`;
  } catch (error) {
    workerd = `not measured: ${String(error).split("\n")[0]}`;
  }

  console.log("| measure (val) | figure | target |");
  console.log("| --- | --- | --- |");
  console.log(
    `| (a) in-scope domain accuracy, forced (1,500 examples/agent) | ${pct(qFull.accuracy)} | ≥ 96% ${mark(qFull.accuracy >= 0.96)} |`,
  );
  console.log(`| (b) coverage at ${THRESHOLD} | ${pct(qFull.coverage)} | ≥ 88% ${mark(qFull.coverage >= 0.88)} |`);
  console.log(`| (b) precision at ${THRESHOLD} | ${pct(qFull.precision)} | ≥ 98% ${mark(qFull.precision >= 0.98)} |`);
  console.log(
    `| (b) out-of-scope declined at ${THRESHOLD} | ${pct(qFull.declined)} | ≥ 80% ${mark(qFull.declined >= 0.8)} |`,
  );
  console.log(
    `| (c) few-shot (10/intent, 150/agent) accuracy, forced | ${pct(qFew.accuracy)} | ≥ 88% ${mark(qFew.accuracy >= 0.88)} |`,
  );
  console.log(`| (c) few-shot coverage at ${THRESHOLD} | ${pct(qFew.coverage)} | — |`);
  console.log(`| (c) few-shot precision at ${THRESHOLD} | ${pct(qFew.precision)} | — (98% is (b)'s target) |`);
  console.log(`| (c) few-shot out-of-scope declined at ${THRESHOLD} | ${pct(qFew.declined)} | — |`);
  console.log(
    `| (d) p50 / p99 µs per route (decide), all calls | ${lat.p50.toFixed(1)} / ${lat.p99.toFixed(1)} | p99 ≤ 100 ${mark(lat.p99 <= 100)} |`,
  );
  console.log(`| (d) p99 µs per route of each input's median of 5 runs | ${lat.p99Median.toFixed(1)} | — |`);
  console.log(
    `| (d) p50 / p99 µs per route, explanation computed and decision serialised | ${latX.p50.toFixed(1)} / ${latX.p99.toFixed(1)} | — |`,
  );
  console.log(
    `| (e) compile 10 × 1,500 examples in workerd, ms (median of 3; all three) | ${workerd} | ≤ 1,000 ${mark(workerdMs <= 1000)} |`,
  );
  console.log(
    `| (e) compile 10 × 1,500 examples in Node, ms (median of 3; first) | ${full.ms.toFixed(0)} (${full.first.toFixed(0)}) | — |`,
  );
  console.log(
    `| (e) memoryBytes, 10 × 1,500 / 10 × 150 | ${(full.router.memoryBytes / 1048576).toFixed(2)} MiB / ${(few.router.memoryBytes / 1048576).toFixed(2)} MiB | reported |`,
  );

  console.log("\nOther registries on the same val (information, no targets):\n");
  console.log("| registry | forced accuracy | coverage @80 | precision @80 | out-of-scope declined @80 |");
  console.log("| --- | --- | --- | --- | --- |");
  const row = (name: string, q: Quality) =>
    console.log(`| ${name} | ${pct(q.accuracy)} | ${pct(q.coverage)} | ${pct(q.precision)} | ${pct(q.declined)} |`);
  row("1,500 examples/agent", qFull);
  row("150 examples/agent (10/intent)", qFew);
  row("1,500 examples + 10 derived keywords/agent", qKw);
  row("10 derived keywords/agent, no examples", qKwOnly);
  console.log(
    `\nRuntime: Node ${process.version} (V8 ${process.versions.v8}); total ${((performance.now() - started) / 1000).toFixed(1)} s.`,
  );
}

await main();
