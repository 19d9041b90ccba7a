/**
 * Token counts (docs/benchmarks.md, Token counts): what gpt-tokenizer's cl100k_base costs
 * Relay, and how far its counts are from the other vocabularies Relay's models use.
 *
 *   npx tsx bench/tokens.bench.ts
 *   CLINC150_DIR=/path/to/clinc150 npx tsx bench/tokens.bench.ts   (the data set elsewhere)
 *
 * Cost: the cold import of `gpt-tokenizer/encoding/cl100k_base` in fresh Node processes; the
 * time to count 1,000 characters of each kind of text, on texts never counted before (the
 * library's merge cache cleared) and again, median of TIMING_PASSES passes; the bytes it adds to the Worker, from `wrangler
 * deploy --dry-run`'s bundle and its esbuild metafile, and the rank table's (a static asset);
 * and in workerd, a fresh process each time, a tiny Worker's start with Relay's tokenizer loader
 * bundled and without, and the first count (the table read through an ASSETS binding, the
 * encoder built) timed in the Worker across zero-delay timers, as Workers only move the clock
 * at I/O.
 *
 * Error: cl100k_base's count of each text beside o200k_base's (GPT-4o's vocabulary) and beside
 * the characters / 4 rule, as a mean absolute % and the worst text, on CLINC150's utterances
 * (skipped, saying so, when the data set is absent; bench/lib/clinc.ts says where it looks) and
 * on synthetic tool outputs and prose (bench/lib/synthetic-texts.ts); and how loose the UTF-8
 * length, Relay's bound before it loads the tokenizer, is: bytes per cl100k_base token.
 * Node only, but for the workerd part, which takes a free port of 8870–8879 (BENCH_PORT to start elsewhere).
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { countTokens as cl100k, clearMergeCache } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as o200k } from "gpt-tokenizer/encoding/o200k_base";
import { utf8Length } from "../src/memory/tokens";
import { RANKS_ASSET } from "../src/services/tokenizer";
import { CLINC_CREDIT, ClincDataError, loadClinc, repoRoot } from "./lib/clinc";
import { freePorts } from "./lib/free-port";
import { collectGarbage } from "./lib/latency-stats";
import { jsonOutput, logOutput, multilingual, prose } from "./lib/synthetic-texts";
import { bundleWorker, workerdConfig } from "./lib/workerd-compile";
import { percentile } from "./lib/wrangler-dev";

const COLD_RUNS = 5;
const TIMING_PASSES = 7;
const TEXTS_PER_KIND = 20;
const TEXT_CHARS = 4000;

const median = (xs: number[]) => percentile(xs, 50);
const range = (xs: number[], digits = 0) =>
  `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;
const kib = (bytes: number) =>
  bytes < 10_240 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024).toFixed(0)} KiB`;

/** The samples: a name, and its texts. */
interface Sample {
  name: string;
  texts: string[];
}
const synthetic = (seed: number): Sample[] => [
  { name: "tool output: JSON, pretty", texts: many(seed, (s) => jsonOutput(s, TEXT_CHARS, true)) },
  { name: "tool output: JSON, minified", texts: many(seed + 1000, (s) => jsonOutput(s, TEXT_CHARS, false)) },
  { name: "tool output: log lines", texts: many(seed + 2000, (s) => logOutput(s, TEXT_CHARS)) },
  { name: "prose, English", texts: many(seed + 3000, (s) => prose(s, TEXT_CHARS)) },
  { name: "prose, eight other languages", texts: many(seed + 4000, (s) => multilingual(s, TEXT_CHARS)) },
];
function many(seed: number, make: (seed: number) => string): string[] {
  return Array.from({ length: TEXTS_PER_KIND }, (_, i) => make(seed + i));
}

function clincSample(): { train: Sample; val: Sample } | null {
  try {
    const clinc = loadClinc();
    return {
      train: { name: "CLINC150 utterances (train)", texts: clinc.train.map((r) => r.text) },
      val: { name: "CLINC150 utterances (val)", texts: clinc.val.map((r) => r.text) },
    };
  } catch (error) {
    if (!(error instanceof ClincDataError)) throw error;
    console.log(`CLINC150 skipped: ${error.message.split("\n").slice(0, 2).join(" ")}`);
    return null;
  }
}

/** A fresh Node process importing `module` and counting one sentence: ms to import, ms for the first count. */
function coldImport(module: string): { importMs: number; firstCountMs: number } {
  const code = `const t0 = performance.now();
const m = await import(${JSON.stringify(module)});
const t1 = performance.now();
m.countTokens("Hello, my order has not arrived yet.");
console.log(JSON.stringify({ importMs: t1 - t0, firstCountMs: performance.now() - t1 }));`;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", code], { cwd: repoRoot, encoding: "utf8" });
  return JSON.parse(out) as { importMs: number; firstCountMs: number };
}

/** µs per 1,000 characters to count `texts` one by one with `count`. */
function timeCount(texts: string[], count: (text: string) => number): number {
  const chars = texts.reduce((a, t) => a + t.length, 0);
  let sink = 0;
  const started = process.hrtime.bigint();
  for (const text of texts) sink += count(text);
  const us = Number(process.hrtime.bigint() - started) / 1000;
  if (sink < 0) console.log(sink);
  return (us / chars) * 1000;
}

/** Relay's Worker as `wrangler deploy` would upload it: the sizes it reports, and the tokenizer's bytes in it. */
function workerBundle() {
  const out = mkdtempSync(path.join(tmpdir(), "relay-tokens-bundle-"));
  try {
    const printed = execFileSync(
      path.join(repoRoot, "node_modules", ".bin", "wrangler"),
      ["deploy", "--dry-run", "--outdir", out, "--metafile", path.join(out, "meta.json")],
      { cwd: repoRoot, encoding: "utf8", env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" } },
    );
    const upload = /Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/.exec(printed);
    const meta = JSON.parse(readFileSync(path.join(out, "meta.json"), "utf8")) as {
      outputs: Record<string, { bytes: number; inputs: Record<string, { bytesInOutput: number }> }>;
    };
    const output = Object.entries(meta.outputs).find(([name]) => name.endsWith("index.js"))![1];
    let tokenizer = 0;
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs))
      if (input.includes("gpt-tokenizer/")) tokenizer += bytesInOutput;
    const ranks = readFileSync(path.join(repoRoot, "public", RANKS_ASSET));
    return {
      uploadKiB: Number(upload?.[1]),
      gzipKiB: Number(upload?.[2]),
      bundleBytes: output.bytes,
      tokenizer,
      ranks: ranks.length,
      ranksGzip: gzipSync(ranks).length,
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** A tiny Worker; with the tokenizer, Relay's loader, which reads the rank table through ASSETS. */
const WORKER = (withTokenizer: boolean) => `
${withTokenizer ? `import { loadTokenizer } from "./src/services/tokenizer";` : ""}
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
export default {
  async fetch(request, env) {
    if (new URL(request.url).pathname !== "/count") return new Response("ok");
    ${
      withTokenizer
        ? `await tick();
    const started = Date.now();
    const { count, exact } = await loadTokenizer(env.ASSETS);
    const tokens = exact ? count("Hello, my order has not arrived yet.") : -1;
    await tick();
    return Response.json({ firstCountMs: Date.now() - started, tokens });`
        : `return new Response("no tokenizer", { status: 404 });`
    }
  },
};`;

/**
 * bench/lib/workerd-compile.ts's config, and an ASSETS binding: workerd's disk service over
 * `public/`, which answers a GET with the file as the platform's assets service would.
 */
const tokensConfig = (port: number) =>
  workerdConfig(port)
    .replace(
      'services = [(name = "main", worker = .bench)],',
      `services = [(name = "main", worker = .bench), (name = "assets", disk = (path = ${JSON.stringify(path.join(repoRoot, "public"))}, writable = false))],`,
    )
    .replace(
      'compatibilityDate = "2026-08-01",',
      'compatibilityDate = "2026-08-01",\n  bindings = [(name = "ASSETS", service = "assets")],',
    );

/** One fresh workerd: ms from its spawn to its first answer, and (with the tokenizer) the first /count. */
async function workerdRun(script: string, port: number, count: boolean) {
  const dir = mkdtempSync(path.join(tmpdir(), "relay-tokens-workerd-"));
  writeFileSync(path.join(dir, "worker.js"), script);
  writeFileSync(path.join(dir, "config.capnp"), tokensConfig(port));
  const started = performance.now();
  const child = spawn(path.join(repoRoot, "node_modules", ".bin", "workerd"), ["serve", "config.capnp"], {
    cwd: dir,
    stdio: "ignore",
  });
  try {
    let startMs = 0;
    while (startMs === 0) {
      try {
        await (await fetch(`http://127.0.0.1:${port}/`)).text();
        startMs = performance.now() - started;
      } catch (error) {
        if (child.exitCode !== null || performance.now() - started > 30_000) throw error;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
    if (!count) return { startMs, firstCountMs: 0, clientFirstMs: 0, clientAgainMs: 0 };
    const timed = async () => {
      const t0 = performance.now();
      const response = await fetch(`http://127.0.0.1:${port}/count`);
      const body = (await response.json()) as { firstCountMs: number; tokens: number };
      if (body.tokens !== cl100k("Hello, my order has not arrived yet."))
        throw new Error(`workerd counted ${body.tokens}`);
      return { ms: performance.now() - t0, firstCountMs: body.firstCountMs };
    };
    const first = await timed();
    const again = await timed();
    return { startMs, firstCountMs: first.firstCountMs, clientFirstMs: first.ms, clientAgainMs: again.ms };
  } finally {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface ErrorRow {
  name: string;
  texts: number;
  tokens: number;
  o200k: { mape: number; worst: number; total: number };
  quarter: { mape: number; worst: number; total: number };
  bytesPerToken: { total: number; min: number; max: number };
}

function errors(sample: Sample): ErrorRow {
  const c = sample.texts.map((t) => cl100k(t));
  const o = sample.texts.map((t) => o200k(t));
  const q = sample.texts.map((t) => Math.ceil(t.length / 4));
  const b = sample.texts.map((t) => utf8Length(t));
  const sum = (xs: number[]) => xs.reduce((a, x) => a + x, 0);
  const against = (xs: number[]) => {
    const e = xs.map((x, i) => (x - c[i]!) / c[i]!);
    const worst = e.reduce((w, x) => (Math.abs(x) > Math.abs(w) ? x : w), 0);
    return { mape: sum(e.map(Math.abs)) / e.length, worst, total: (sum(xs) - sum(c)) / sum(c) };
  };
  const ratios = b.map((x, i) => x / c[i]!);
  return {
    name: sample.name,
    texts: sample.texts.length,
    tokens: sum(c),
    o200k: against(o),
    quarter: against(q),
    bytesPerToken: { total: sum(b) / sum(c), min: Math.min(...ratios), max: Math.max(...ratios) },
  };
}

const pct = (x: number) => `${x >= 0 ? "+" : "−"}${Math.abs(x * 100).toFixed(1)}%`;

// Cost: the cold import first, in processes of their own, before this one has loaded much.
const cold = Array.from({ length: COLD_RUNS }, () => coldImport("gpt-tokenizer/encoding/cl100k_base"));
const coldO200k = Array.from({ length: COLD_RUNS }, () => coldImport("gpt-tokenizer/encoding/o200k_base"));

const clinc = clincSample();
const samples = [...(clinc ? [clinc.val] : []), ...synthetic(1)];
// Warm the JIT on texts of the same kinds, then time texts never counted (cache cleared), then again.
for (const sample of [...(clinc ? [clinc.train] : []), ...synthetic(100)]) {
  timeCount(sample.texts, cl100k);
  timeCount(sample.texts, utf8Length);
}
const unseen = synthetic(500);
const speed: { name: string; first: number; again: number; bound: number }[] = [];
for (const sample of samples) {
  const fresh = sample.name.startsWith("CLINC") ? sample.texts : unseen.find((s) => s.name === sample.name)!.texts;
  const first: number[] = [];
  const again: number[] = [];
  const bound: number[] = [];
  // A single pass is a few milliseconds, which one collection or a neighbour's burst can double: the median of several.
  for (let i = 0; i < TIMING_PASSES; i++) {
    clearMergeCache();
    await collectGarbage();
    first.push(timeCount(fresh, cl100k));
    again.push(timeCount(fresh, cl100k));
    await collectGarbage();
    bound.push(timeCount(fresh, utf8Length));
  }
  speed.push({ name: sample.name, first: median(first), again: median(again), bound: median(bound) });
}

const bundle = workerBundle();
const portBase = Number(process.env.BENCH_PORT ?? 8870);
const [port] = await freePorts(1, portBase, portBase + 9);
const withScript = await bundleWorker(WORKER(true));
const withoutScript = await bundleWorker(WORKER(false));
const workerd = { with: [] as Awaited<ReturnType<typeof workerdRun>>[], without: [] as number[] };
for (let i = 0; i < COLD_RUNS; i++) {
  workerd.without.push((await workerdRun(withoutScript, port!, false)).startMs);
  workerd.with.push(await workerdRun(withScript, port!, true));
}

const date = new Date().toISOString().slice(0, 10);
console.log(`\nToken counts, ${date}: the tokenizer's cost (median of ${COLD_RUNS}, lowest–highest)\n`);
console.log("| measure | figure |\n| --- | --- |");
console.log(`| Node: cold import of cl100k_base, a fresh process | ${range(cold.map((r) => r.importMs))} ms |`);
console.log(
  `| Node: its first count | ${range(
    cold.map((r) => r.firstCountMs),
    2,
  )} ms |`,
);
console.log(`| Node: cold import of o200k_base, for comparison | ${range(coldO200k.map((r) => r.importMs))} ms |`);
for (const s of speed)
  console.log(
    `| Node: count 1,000 characters, ${s.name} — new texts; counted again; UTF-8 bound | ${s.first.toFixed(1)}; ${s.again.toFixed(1)}; ${s.bound.toFixed(2)} µs |`,
  );
console.log(`| Worker upload (wrangler deploy --dry-run) | ${bundle.uploadKiB} KiB, gzip ${bundle.gzipKiB} KiB |`);
console.log(
  `| gpt-tokenizer in it (esbuild metafile) | ${kib(bundle.tokenizer)}, ${((bundle.tokenizer / bundle.bundleBytes) * 100).toFixed(0)}% of the bundle |`,
);
console.log(
  `| the cl100k_base rank table, a static asset (${RANKS_ASSET}), not in the upload | ${kib(bundle.ranks)}, gzip ${kib(bundle.ranksGzip)} |`,
);
console.log(
  `| tiny Worker bundle with / without the tokenizer | ${kib(withScript.length)} / ${kib(withoutScript.length)} |`,
);
console.log(
  `| workerd: spawn to first answer, tiny Worker with / without the tokenizer bundled | ${range(workerd.with.map((r) => r.startMs))} / ${range(workerd.without)} ms |`,
);
console.log(
  `| workerd: first count in a fresh isolate, the table read through ASSETS and the encoder built (Worker's clock) | ${range(workerd.with.map((r) => r.firstCountMs))} ms |`,
);
console.log(
  `| workerd: that request at the client; the next one | ${range(
    workerd.with.map((r) => r.clientFirstMs),
    1,
  )}; ${range(
    workerd.with.map((r) => r.clientAgainMs),
    1,
  )} ms |`,
);

console.log(`\nThe counts' error against cl100k_base, per text (${clinc ? CLINC_CREDIT : "CLINC150 absent"})\n`);
console.log(
  "| sample | texts | cl100k tokens | o200k: mean abs. error; worst; on the total | chars/4: mean abs. error; worst; on the total | UTF-8 bytes per token: total (lowest–highest) |",
);
console.log("| --- | --- | --- | --- | --- | --- |");
for (const r of samples.map(errors))
  console.log(
    `| ${r.name} | ${r.texts.toLocaleString("en")} | ${r.tokens.toLocaleString("en")} | ${(r.o200k.mape * 100).toFixed(1)}%; ${pct(r.o200k.worst)}; ${pct(r.o200k.total)} | ` +
      `${(r.quarter.mape * 100).toFixed(1)}%; ${pct(r.quarter.worst)}; ${pct(r.quarter.total)} | ${r.bytesPerToken.total.toFixed(2)} (${r.bytesPerToken.min.toFixed(2)}–${r.bytesPerToken.max.toFixed(2)}) |`,
  );
