/**
 * Routing quality of the rule tier on CLINC150 (docs/benchmarks.md), run as `npx tsx bench/routing-quality.ts`
 * (`npm run bench:routing`). Data: CLINC150 by Larson et al., 2019, CC BY 3.0, read from
 * CLINC150_DIR, by default ../shared/datasets/clinc150 beside the repository (see bench/lib/clinc.ts).
 *
 * Ten agents, one per domain, beside the demo agents (agents/*.md); examples are train's
 * in-scope utterances of the domain, less the unseen split (bench/lib/clinc.ts: the last rows of
 * each intent, never fitted or tuned on: a stand-in for the test split the project does not
 * have); no keywords or patterns (the "+ keywords" row adds 10 derived keywords per domain, see
 * bench/lib/registries.ts). Everything is measured on `val` and on the unseen split; the
 * confidence calibration was fitted on the rest of train (bench/fit-calibration.ts).
 * Route timings are V8 in Node (the engine workerd runs; workerd's clock does not advance while
 * code runs, so per-route µs cannot be read inside it), after a warm-up pass. Compile time is
 * measured both in Node and inside workerd (bench/lib/workerd-compile.ts).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseAgentFile } from "../src/registry/agent-file";
import { type CompiledRuleRouter, compileRuleRouter } from "../src/routing/rule-router";
import type { AgentDefinition } from "../src/schemas/agent";
import {
  CLINC_CREDIT,
  type ClincRow,
  examplesByDomain,
  HOLDOUT_PER_INTENT,
  loadClincOrExit,
  repoRoot,
  splitHoldout,
} from "./lib/clinc";
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

/** The demo agents (agents/*.md), which every CLINC150 registry here sits beside. */
function demoAgents(): AgentDefinition[] {
  const dir = path.join(repoRoot, "agents");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => parseAgentFile(readFileSync(path.join(dir, f), "utf8"), f));
}

async function main(): Promise<void> {
  const started = performance.now();
  const { train, val, domains: domainMap } = loadClincOrExit();
  const { learn, unseen } = splitHoldout(train);
  const domains = Object.keys(domainMap);
  const demo = demoAgents();
  const registry = (perIntent: number, keywords?: Map<string, string[]>) => [
    ...domainAgents(domains, examplesByDomain(learn, perIntent), keywords),
    ...demo,
  ];
  const count = (rows: readonly ClincRow[]) =>
    `${rows.filter((r) => r.domain !== "oos").length} in-scope, ${rows.filter((r) => r.domain === "oos").length} out-of-scope`;
  console.log(`# Rule-tier routing quality — ${CLINC_CREDIT}\n`);
  console.log(
    `${domains.length} agents (one per domain) beside the ${demo.length} demo agents; examples from train less its unseen split (the last ${HOLDOUT_PER_INTENT} rows of each intent, never fitted or tuned on). Measured on \`val\` (${count(val)}) and on the unseen split (${count(unseen)}). Threshold ${THRESHOLD}.\n`,
  );

  const full = compileTime(registry(Infinity));
  const few = compileTime(registry(10));
  const qFull = { val: quality(full.router, val), unseen: quality(full.router, unseen) };
  const qFew = { val: quality(few.router, val), unseen: quality(few.router, unseen) };
  const table = (
    title: string,
    q: { val: Quality; unseen: Quality },
    targets: { accuracy?: number; coverage?: number; precision?: number; declined?: number },
  ) => {
    console.log(`\n## ${title}\n`);
    console.log("| measure | val | unseen split | target |");
    console.log("| --- | --- | --- | --- |");
    const line = (name: string, key: keyof Quality, target?: number) =>
      console.log(
        `| ${name} | ${pct(q.val[key])} | ${pct(q.unseen[key])} | ${target === undefined ? "—" : `≥ ${pct(target)} ${mark(q.val[key] >= target)} / ${mark(q.unseen[key] >= target)}`} |`,
      );
    line("in-scope domain accuracy, forced", "accuracy", targets.accuracy);
    line(`coverage (in-scope at confidence ≥ ${THRESHOLD})`, "coverage", targets.coverage);
    line(`precision at ${THRESHOLD}`, "precision", targets.precision);
    line(`out-of-scope declined at ${THRESHOLD}`, "declined", targets.declined);
  };
  table("Full training data (80 examples per intent, ~1,200 per agent)", qFull, { accuracy: 0.96, declined: 0.9 });
  table("Few-shot: 10 examples per intent (150 per agent)", qFew, { accuracy: 0.9, coverage: 0.75, precision: 0.97 });

  const withKw = compileRuleRouter(registry(Infinity, deriveKeywords(learn)));
  const kwOnly = compileRuleRouter([...domainAgents(domains, new Map(), deriveKeywords(learn)), ...demo]);
  console.log("\nOther registries, same agents beside the demo agents (information, no targets; val):\n");
  console.log("| registry | forced accuracy | coverage @80 | precision @80 | out-of-scope declined @80 |");
  console.log("| --- | --- | --- | --- | --- |");
  const row = (name: string, q: Quality) =>
    console.log(`| ${name} | ${pct(q.accuracy)} | ${pct(q.coverage)} | ${pct(q.precision)} | ${pct(q.declined)} |`);
  row("all examples + 10 derived keywords/agent", quality(withKw, val));
  row("10 derived keywords/agent, no examples", quality(kwOnly, val));

  const inputs = val.map((r) => r.text);
  const lat = latency(full.router, inputs, false);
  const latX = latency(full.router, inputs, true);
  let workerd = "not measured";
  try {
    const w = await compileInWorkerd(registry(Infinity));
    workerd = `${[...w.ms].sort((a, b) => a - b)[1]} (${w.ms.join(", ")})`;
  } catch (error) {
    workerd = `not measured: ${String(error).split("\n")[0]}`;
  }
  console.log("\n| cost (full registry) | figure |");
  console.log("| --- | --- |");
  console.log(`| p50 / p99 µs per route (decide), Node | ${lat.p50.toFixed(1)} / ${lat.p99.toFixed(1)} |`);
  console.log(`| p99 µs per route of each input's median of 5 runs | ${lat.p99Median.toFixed(1)} |`);
  console.log(
    `| p50 / p99 µs with the explanation built and serialised | ${latX.p50.toFixed(1)} / ${latX.p99.toFixed(1)} |`,
  );
  console.log(`| compile (parts + link), workerd, ms (median of 3; all three) | ${workerd} |`);
  console.log(
    `| compile (parts + link), Node, ms: full / few-shot (median of 3) | ${full.ms.toFixed(0)} / ${few.ms.toFixed(0)} |`,
  );
  console.log(
    `| memoryBytes, full / few-shot | ${(full.router.memoryBytes / 1048576).toFixed(2)} MiB / ${(few.router.memoryBytes / 1048576).toFixed(2)} MiB |`,
  );
  console.log(
    `\nRuntime: Node ${process.version} (V8 ${process.versions.v8}); total ${((performance.now() - started) / 1000).toFixed(1)} s.`,
  );
}

await main();
