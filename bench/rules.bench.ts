/**
 * Rule-tier benchmark (docs/benchmarks.md, Rule tier): compiled rules (one automaton +
 * prefiltered patterns) against a naive per-agent loop, in the same run, on synthetic
 * registries of 10 to 10,000 agents (20 keywords and 5 patterns each).
 * Run: npx tsx bench/rules.bench.ts   (about 2 minutes on 2 cores; exits by itself)
 */
import { type CompiledRuleSet, compileRules } from "../src/routing/rules";
import { collectGarbage, type LatencySummary, measure, us } from "./lib/latency-stats";
import { seedRoute } from "./lib/rules-seed-baseline";
import { corpus, type InputKind, inputs, registry, seedAgents } from "./lib/rules-synthetic-registry";

const SIZES = [10, 100, 1_000, 10_000];
const BYTES = [200, 2048];
const KINDS: InputKind[] = ["miss", "one", "hit", "hit-utf8"];

interface Row {
  agents: number;
  bytes: number;
  kind: InputKind;
  full: LatencySummary;
  top3: LatencySummary;
  seed: LatencySummary;
  matches: number;
  seedMatches: number;
}

const COMPILED = { warmup: 2000, minIterations: 2000, maxIterations: 40_000, budgetMs: 600 };

/** The naive loop costs ~agents × bytes: fewer timed calls where one call takes a second. */
function seedOptions(agents: number, bytes: number) {
  const cost = agents * bytes;
  if (cost >= 10_000_000) return { warmup: 1, minIterations: 6, maxIterations: 50, budgetMs: 1000 };
  if (cost >= 1_000_000) return { warmup: 3, minIterations: 12, maxIterations: 500, budgetMs: 800 };
  return { warmup: 50, minIterations: 200, maxIterations: 20_000, budgetMs: 500 };
}

function pad(cells: (string | number)[], widths: number[]): string {
  return cells.map((c, i) => String(c).padStart(widths[i]!)).join("  ");
}

async function main(): Promise<void> {
  const started = Date.now();
  const c = corpus();
  const compileRows: string[] = [];
  const compileWidths = [7, 10, 9, 9, 18, 8, 8, 7, 12, 8];
  const rows: Row[] = [];
  for (const size of SIZES) {
    const agents = registry(size, c);
    const seedView = seedAgents(agents);
    await collectGarbage();
    const t0 = process.hrtime.bigint();
    const rules: CompiledRuleSet = compileRules(agents);
    const compileMs = Number(process.hrtime.bigint() - t0) / 1e6;
    const s = rules.stats;
    compileRows.push(
      pad(
        [
          size,
          compileMs.toFixed(1),
          s.keywords,
          s.patterns,
          `${s.anchoredPatterns}/${s.prefilteredPatterns - s.anchoredPatterns}/${s.alwaysRunPatterns}`,
          s.entries,
          s.states,
          s.classes,
          `${s.denseStates}`,
          (s.memoryBytes / 1048576).toFixed(2),
        ],
        compileWidths,
      ),
    );
    for (const bytes of BYTES) {
      for (const kind of KINDS) {
        const texts = inputs(kind, bytes, agents, c);
        let matches = 0;
        let seedMatches = 0;
        await collectGarbage();
        const full = measure((i) => (matches += rules.match(texts[i % texts.length]!).length), COMPILED);
        await collectGarbage();
        const top3 = measure((i) => rules.match(texts[i % texts.length]!, 3), COMPILED);
        await collectGarbage();
        const seed = measure(
          (i) => (seedMatches += seedRoute(seedView, texts[i % texts.length]!).length),
          seedOptions(size, bytes),
        );
        const calls = (m: LatencySummary, o: { warmup: number }) => m.samples + o.warmup;
        rows.push({
          agents: size,
          bytes,
          kind,
          full,
          top3,
          seed,
          matches: matches / calls(full, COMPILED),
          seedMatches: seedMatches / calls(seed, seedOptions(size, bytes)),
        });
        process.stderr.write(
          `  ${size} agents, ${bytes} B, ${kind}: ${us(full.p50)} µs (top 3: ${us(top3.p50)}) vs naive ${us(seed.p50)}\n`,
        );
      }
    }
  }

  console.log(
    `Rule tier benchmark — Node ${process.version}, V8 ${process.versions.v8}: the engine workerd runs (its V8 version may differ).`,
  );
  console.log(
    `${process.platform}/${process.arch}, one thread. µs per route, each call timed with process.hrtime.bigint after a warm-up; full GC between phases.`,
  );
  console.log(
    "Registries: 20 keywords (18 words + 2 two-word phrases from a 4,000-word vocabulary) and 5 patterns per agent.",
  );
  console.log(
    "Inputs (64 per cell, flat strings): miss = filler words only (vocabulary words can still occur inside longer",
  );
  console.log(
    "words, and patterns without \\b may match there); one = miss + 1 agent-specific code (`tk…-1234`, which matches",
  );
  console.log(
    "one agent at any size); hit = + 3 keywords of random agents (each shared by ~50 agents at 10,000) + 1 code;",
  );
  console.log("hit-utf8 = hit + a few non-ASCII words (NFKC, two-pass path).\n");
  console.log("Compile (once per registry version)");
  console.log(
    pad(
      [
        "agents",
        "compile ms",
        "keywords",
        "patterns",
        "anch/prefilt/always",
        "entries",
        "states",
        "classes",
        "dense states",
        "mem MiB",
      ],
      compileWidths,
    ),
  );
  for (const line of compileRows) console.log(line);

  console.log(
    "\nRoute latency, µs (full = match(input), every agent with score > 0; top 3 = match(input, 3); naive = the naive per-agent loop)",
  );
  const widths = [7, 6, 9, 8, 8, 9, 9, 10, 10, 7, 8, 13];
  console.log(
    pad(
      [
        "agents",
        "input",
        "kind",
        "p50",
        "p99",
        "top3 p50",
        "top3 p99",
        "naive p50",
        "naive p99",
        "naive n",
        "speedup",
        "matches",
      ],
      widths,
    ),
  );
  for (const r of rows) {
    console.log(
      pad(
        [
          r.agents,
          r.bytes === 2048 ? "2 KiB" : `${r.bytes} B`,
          r.kind,
          us(r.full.p50),
          us(r.full.p99),
          us(r.top3.p50),
          us(r.top3.p99),
          us(r.seed.p50),
          us(r.seed.p99),
          r.seed.samples,
          `${(r.seed.p50 / r.full.p50).toFixed(0)}×`,
          `${r.matches.toFixed(1)} / ${r.seedMatches.toFixed(1)}`,
        ],
        widths,
      ),
    );
  }
  console.log(
    "  speedup = naive p50 / full p50. matches = agents returned per route, compiled / naive (the naive loop matches keywords as",
  );
  console.log(
    "  substrings, so it returns more). Compiled samples: up to 40,000 per cell; naive n = timed naive calls (p99 of few = max).",
  );

  const find = (agents: number, bytes: number, kind: InputKind): Row =>
    rows.find((r) => r.agents === agents && r.bytes === bytes && r.kind === kind)!;
  const verdict = (ok: boolean): string => (ok ? "MET   " : "MISSED");
  console.log("\nTargets");
  for (const kind of KINDS) {
    const r = find(1000, 200, kind);
    console.log(
      `  ${verdict(r.full.p99 <= 50)} p99 ≤ 50 µs, 1,000 agents, 200 B, ${kind}: ${us(r.full.p99)} µs (top 3: ${us(r.top3.p99)} µs)`,
    );
  }
  for (const bytes of BYTES) {
    for (const kind of KINDS) {
      const x = find(1000, bytes, kind).seed.p50 / find(1000, bytes, kind).full.p50;
      console.log(
        `  ${verdict(x >= 20)} ≥ 20× the naive loop, 1,000 agents, ${bytes === 2048 ? "2 KiB" : `${bytes} B`}, ${kind}: ${x.toFixed(0)}×`,
      );
    }
  }
  for (const bytes of BYTES) {
    for (const kind of KINDS) {
      const small = find(100, bytes, kind);
      const large = find(10_000, bytes, kind);
      const growth = large.full.p50 / small.full.p50;
      const top3 = large.top3.p50 / small.top3.p50;
      const label = `${bytes === 2048 ? "2 KiB" : `${bytes} B`}, ${kind}`;
      console.log(
        `  ${verdict(growth <= 3)} p50 growth 100 → 10,000 agents ≤ 3×, ${label}: ${growth.toFixed(2)}× (top 3: ${top3.toFixed(2)}×; agents returned ${small.matches.toFixed(1)} → ${large.matches.toFixed(1)})`,
      );
    }
  }
  console.log(`\nTotal ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

await main();
