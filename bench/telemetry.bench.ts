/**
 * What trace export costs (docs/benchmarks.md, Trace export; docs/observability.md): runs
 * with handoffs on workerd through Miniflare's API, with the tenant's export off and on, in
 * pairs of passes, each pair on a workerd of its own — a fake OpenAI-compatible model and an OTLP/HTTP
 * receiver, each in a process of its own and answering at once — beside `GET /health` under
 * the same load.
 *
 *   npx tsx bench/telemetry.bench.ts
 *
 * Each run is one user message on a fresh session: agent a hands off to b, b to c, c answers
 * (3 model calls, 2 handoffs, 8 spans). A pass runs RUNS runs, CONCURRENCY in flight, and
 * ends when workerd is idle again (and, with export on, the receiver holds every span of the
 * pass), so nothing a pass leaves for an alarm spills into the next. Its throughput is the
 * sustained rate: the runs completed between its first and last quarter marks over that
 * time, during which the alarms of earlier runs — their audit flush and, on, their export —
 * compete with the runs as they do under a steady stream. The whole window's rate is printed
 * too; it adds the pass's tail, which is mostly timers waiting (the flush half a second after
 * the last run, the export counters' write a second after the first export) and, on this VM,
 * V8 collecting a heap that grows by every session a pass leaves in memory. PASSES pairs run
 * in alternating order (off-on, on-off, …), each on a fresh workerd after a warm-up pass each
 * way there, so that the sessions earlier pairs left in memory weigh on none; workerd's CPU
 * per run is over the whole window. The verdict is the median of the pairs' ratios (on ÷ off of two
 * passes run back to back): the VM's drift over a minute moves both passes of a pair alike,
 * where it can put all the slow passes on one side of two medians. Then, Relay stopped, the platform's floor of one export: the
 * smallest object's write with an export queued in the same transaction and sent by its alarm
 * (a POST of as many bytes as a run's export), less the write alone. Then the bundle: the Worker as
 * `wrangler deploy --dry-run --minify` builds it, with and without the bytes the telemetry
 * modules take in it (esbuild's metafile).
 */

import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { apiClient } from "./lib/api-client";
import { floorCall, startBaselineObjects } from "./lib/baseline-object";
import { chatCompletion } from "./lib/chat-completion";
import { spawnRole } from "./lib/child-role";
import { startWorkerdServer } from "./lib/workerd-server";
import { percentile, runConcurrent } from "./lib/wrangler-dev";

const KEY = "bench-telemetry-key";
const PORT = 8805;
const FAKES_PORT = 8806;
const RECEIVER_PORT = 8826;
const RUNS = Number(process.env.BENCH_RUNS ?? 150);
const PASSES = Number(process.env.BENCH_PASSES ?? 7);
const CONCURRENCY = 4;
const SPANS_PER_RUN = 8;
const root = join(import.meta.dirname, "..");

interface Pass {
  /**
   * Runs per second under sustained load: the runs completed between the pass's first and
   * last quarter marks over that time. The alarms of the runs before the window (their audit
   * flush and, on, their export) run inside it, as they would in a steady stream.
   */
  perSecond: number;
  /** Runs per second over the whole window, the drain after the last run included. */
  whole: number;
  ms: number[];
  /** workerd's CPU over the pass (every process), per run. */
  cpuPerRun: number;
}

if (process.env.BENCH_ROLE === "receiver") {
  // The collector, in a process of its own so its work never delays the model's answers (a
  // run waits on three of them). It answers at once (an empty ExportTraceServiceResponse) and
  // counts a request's spans when asked for its stats, so the counting is not in a pass's runs.
  let spans = 0;
  let requests = 0;
  let bytes = 0;
  let unread: string[] = [];
  createServer((req, res) => {
    let text = "";
    req.on("data", (chunk) => (text += chunk));
    req.on("end", () => {
      if (req.url === "/stats") {
        for (const body of unread) {
          const parsed = JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: unknown[] }[] }[] };
          for (const r of parsed.resourceSpans) for (const s of r.scopeSpans) spans += s.spans.length;
        }
        unread = [];
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ spans, requests, bytes }));
      }
      requests++;
      bytes += Buffer.byteLength(text);
      unread.push(text);
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
  }).listen(RECEIVER_PORT, "127.0.0.1", () => console.log("listening"));
} else if (process.env.BENCH_ROLE === "fakes") {
  // The model scripts the chain.
  let calls = 0;
  createServer((req, res) => {
    let text = "";
    req.on("data", (chunk) => (text += chunk));
    req.on("end", () => {
      const body = JSON.parse(text) as { model: string; messages: { content: string | null }[] };
      const agent = /^You are '([^']+)'/.exec(body.messages[0]?.content ?? "")?.[1];
      const next = agent === "bench-a" ? "bench_b" : agent === "bench-b" ? "bench_c" : null;
      const message = next
        ? {
            content: null,
            tool_calls: [
              {
                id: `call_${++calls}`,
                type: "function" as const,
                function: { name: `transfer_to_${next}`, arguments: '{"reason":"next"}' },
              },
            ],
          }
        : { content: "done" };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(chatCompletion(++calls, body.model, message));
    });
  }).listen(FAKES_PORT, "127.0.0.1", () => console.log("listening"));
} else {
  await main();
}

async function main(): Promise<void> {
  const fakes = await spawnRole(import.meta.filename, "fakes");
  const receiver = await spawnRole(import.meta.filename, "receiver");
  const fakesUrl = `http://127.0.0.1:${FAKES_PORT}`;
  const receiverUrl = `http://127.0.0.1:${RECEIVER_PORT}`;
  const receiverStats = async () =>
    (await (await fetch(`${receiverUrl}/stats`)).json()) as { spans: number; requests: number; bytes: number };
  const received = async () => (await receiverStats()).spans;
  const off: Pass[] = [];
  const on: Pass[] = [];
  let last: Pick<RelayFigures, "healthMs" | "healthPerSecond" | "rss"> | undefined;
  // Each pair on a workerd of its own: the sessions earlier passes leave in memory (some 600
  // MiB after a dozen passes) would weigh on later pairs, and on one side more than the other.
  for (let pair = 0; pair < PASSES; pair++) {
    const server = await startWorkerdServer(PORT, KEY, {
      OPENAI_BASE_URL: `${fakesUrl}/v1`,
      OPENAI_API_KEY: "sk-bench",
      RELAY_ALLOW_LOCAL_ENDPOINTS: "true",
    });
    try {
      const { pass, health, counters } = await setUp(server, receiverUrl, received);
      await runConcurrent(200, CONCURRENCY, health);
      // A warm-up pass each way, then the pair, in alternating order (off-on, on-off, …) so a
      // drift of the machine weighs on both sides alike.
      const order = pair % 2 === 0 ? [false, true] : [true, false];
      for (const exporting of order) await pass(exporting);
      for (const exporting of order) (exporting ? on : off).push(await pass(exporting));
      if (pair === PASSES - 1) {
        const healthStart = performance.now();
        const healthMs = await runConcurrent(RUNS * 10, CONCURRENCY, health);
        const healthPerSecond = (RUNS * 10) / ((performance.now() - healthStart) / 1000);
        last = { healthMs, healthPerSecond, rss: server.workerdRssMiB() };
        // What this server's tenant counted: a failed POST waits out a retry's delay, which a pass waits for too.
        console.log(`export counters, last pair: ${JSON.stringify(await counters())}`);
      }
    } finally {
      await server.stop();
    }
  }
  const wire = await receiverStats();
  // Every span the receiver got came from an on pass: 8 a run.
  const relay: RelayFigures = { off, on, ...last!, bytesPerRun: wire.bytes / (wire.spans / SPANS_PER_RUN) };
  let floor: { write: number; exported: number };
  try {
    floor = await exportFloor(receiverUrl, relay.bytesPerRun);
  } finally {
    fakes.kill();
    receiver.kill();
  }
  report(relay, floor);
  bundle();
}

/** A fresh server's agents and settings; its pass (which first sets the export on or off) and its /health call. */
async function setUp(
  server: Awaited<ReturnType<typeof startWorkerdServer>>,
  receiverUrl: string,
  received: () => Promise<number>,
): Promise<{ pass: (on: boolean) => Promise<Pass>; health: () => Promise<void>; counters: () => Promise<unknown> }> {
  const api = apiClient(`${server.url}/v1`, KEY).call;
  for (const agent of [
    { name: "bench-a", description: "First", handoffs: ["bench-b"] },
    { name: "bench-b", description: "Second", handoffs: ["bench-c"] },
    { name: "bench-c", description: "Third" },
  ]) {
    const res = await api("PUT", `/agents/${agent.name}`, agent);
    if (res.status >= 300) throw new Error(`PUT ${agent.name}: ${JSON.stringify(res.json)}`);
  }
  const config = await api("PUT", "/config/routing", { llm: { provider: "openai", model: "fake-0ms" } });
  if (config.status !== 200) throw new Error(`config: ${JSON.stringify(config.json)}`);
  const exportOn = async (on: boolean) => {
    const res = on
      ? await api("PUT", "/config/telemetry", { endpoint: `${receiverUrl}/v1/traces` })
      : await api("DELETE", "/config/telemetry");
    if (res.status >= 300) throw new Error(`telemetry config: ${JSON.stringify(res.json)}`);
    // Past the isolate's one-second cache of the settings (docs/observability.md, What is sent).
    await new Promise((r) => setTimeout(r, 1_100));
  };
  /** One pass: RUNS chains; with export on, until the receiver has all their spans. Runs per second. */
  async function pass(on: boolean): Promise<Pass> {
    await exportOn(on);
    const sessions: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const created = await api("POST", "/sessions", { agent: "bench-a", ttl_s: 600 });
      if (created.status !== 201) throw new Error(`session: ${JSON.stringify(created.json)}`);
      sessions.push(created.json.id);
    }
    const before = await received();
    const cpuBefore = server.workerdCpuMs();
    const start = performance.now();
    const done: number[] = [];
    const ms = await runConcurrent(RUNS, CONCURRENCY, async (i) => {
      const res = await api("POST", `/sessions/${sessions[i]}/messages`, { role: "user", content: "hello" });
      const handoffs = (res.json?.run?.events ?? []).filter((e: { event_type: string }) => e.event_type === "handoff");
      if (res.json?.run?.status !== "completed" || handoffs.length !== 2)
        throw new Error(`run not as scripted: ${JSON.stringify(res.json).slice(0, 400)}`);
      done.push(performance.now());
    });
    const ran = performance.now();
    const cpuRan = server.workerdCpuMs();
    const want = on ? before + RUNS * SPANS_PER_RUN : before;
    while ((await received()) < want) {
      if (performance.now() - start > 120_000)
        throw new Error(`spans: ${(await received()) - before} of ${want - before}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    // Both ways, the pass ends when workerd is idle again: its runs' audit flush (and, on, their
    // exports, which go in the same alarm) counted in the pass, never spilling into the next.
    const arrived = performance.now();
    await quiet(server);
    const end = performance.now();
    const seconds = (performance.now() - start) / 1000;
    const cpuPerRun = (server.workerdCpuMs() - cpuBefore) / RUNS;
    if (!on && (await received()) !== before) throw new Error("spans were exported with export off");
    const [first, last] = [Math.floor(RUNS / 4), Math.floor((RUNS * 3) / 4)];
    const perSecond = (last - first) / ((done[last]! - done[first]!) / 1000);
    // Seconds running, then waiting for the spans, then for workerd to go idle.
    const phases = [(ran - start) / 1000, (arrived - ran) / 1000, (end - arrived) / 1000];
    console.log(
      `pass, export ${on ? "on " : "off"}: ${perSecond.toFixed(1)} runs/s steady, ${(RUNS / seconds).toFixed(1)} whole; running, spans, idle ${phases.map((s) => s.toFixed(2)).join(" / ")} s; CPU/run ${((cpuRan - cpuBefore) / RUNS).toFixed(2)} + ${((server.workerdCpuMs() - cpuRan) / RUNS).toFixed(2)} ms; RSS ${server.workerdRssMiB()} MiB`,
    );
    return { perSecond, whole: RUNS / seconds, ms, cpuPerRun };
  }
  const health = async () => {
    await (await fetch(`${server.url}/health`)).text();
  };
  const counters = async () => {
    const { stats } = (await api("GET", "/config/telemetry")).json;
    return { exported: stats.exported_spans, dropped: stats.dropped_spans, last_error: stats.last_error };
  };
  return { pass, health, counters };
}

/** Waits until workerd's CPU time stops growing (200 ms without a clock tick of it). */
async function quiet(server: { workerdCpuMs(): number }): Promise<void> {
  let last = server.workerdCpuMs();
  for (;;) {
    await new Promise((r) => setTimeout(r, 200));
    const now = server.workerdCpuMs();
    if (now === last) return;
    last = now;
  }
}

interface RelayFigures {
  off: Pass[];
  on: Pass[];
  healthMs: number[];
  healthPerSecond: number;
  rss: number;
  bytesPerRun: number;
}

/**
 * The platform's floor for one export, with Relay's server stopped: the smallest object's
 * write in a live object, alone and with an export queued in the same transaction and sent
 * by its alarm (a POST of a run's OTLP bytes to the same receiver). workerd CPU per op.
 */
async function exportFloor(receiver: string, bytes: number): Promise<{ write: number; exported: number }> {
  const plain = await startBaselineObjects(PORT + 20);
  try {
    const names = (prefix: string) => Array.from({ length: RUNS }, (_, i) => `${prefix}-${i}`);
    const [writes, exports] = [names("w"), names("e")];
    // Live objects first, as Relay's sessions are made before the runs.
    for (const name of [...writes, ...exports]) await floorCall(`${plain.url}/objects/${name}`, { method: "POST" });
    const perOp = async (call: (name: string) => Promise<unknown>, list: string[], settle = async () => {}) => {
      const before = plain.workerdCpuMs();
      await runConcurrent(list.length, CONCURRENCY, (i) => call(list[i]!).then(() => undefined));
      await settle();
      return (plain.workerdCpuMs() - before) / list.length;
    };
    const stats = async () => ((await (await fetch(`${receiver}/stats`)).json()) as { requests: number }).requests;
    const requested = await stats();
    const write = await perOp((name) => floorCall(`${plain.url}/objects/${name}`, { method: "POST" }), writes);
    const to = encodeURIComponent(`${receiver}/v1/traces`);
    const exported = await perOp(
      (name) => floorCall(`${plain.url}/exported/${name}?to=${to}&bytes=${Math.round(bytes)}`, { method: "POST" }),
      exports,
      async () => {
        const deadline = performance.now() + 60_000;
        while ((await stats()) < requested + exports.length) {
          if (performance.now() > deadline) throw new Error("the floor's exports did not all arrive");
          await new Promise((r) => setTimeout(r, 20));
        }
      },
    );
    return { write, exported };
  } finally {
    await plain.stop();
  }
}

function report(relay: RelayFigures, floor: { write: number; exported: number }): void {
  const median = (passes: Pass[]) =>
    [...passes].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(passes.length / 2)]!;
  const cpuMedian = (passes: Pass[]) =>
    [...passes.map((p) => p.cpuPerRun)].sort((a, b) => a - b)[Math.floor(passes.length / 2)]!;
  const mOff = median(relay.off);
  const mOn = median(relay.on);
  const middle = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  // Pair i is off[i] and on[i], run back to back.
  const ratios = relay.on.map((p, i) => p.perSecond / relay.off[i]!.perSecond);
  const share = middle(ratios);
  const wholeShare = middle(relay.on.map((p, i) => p.whole / relay.off[i]!.whole));
  const fmt = (n: number) => n.toFixed(2);
  const [cpuOff, cpuOn] = [cpuMedian(relay.off), cpuMedian(relay.on)];
  console.log(
    `\nTrace export on workerd via Miniflare's API: ${RUNS} runs a pass (3 model calls, 2 handoffs each), ${CONCURRENCY} in flight, ${PASSES} passes each way, median pass`,
  );
  console.log(
    "| measure | runs/s, sustained | runs/s, whole pass | handoffs/s, sustained | run p50 | run p99 | workerd CPU per run |\n| --- | --- | --- | --- | --- | --- | --- |",
  );
  console.log(
    `| baseline: GET /health, same load | ${relay.healthPerSecond.toFixed(0)} req/s | | | ${fmt(percentile(relay.healthMs, 50))} ms | ${fmt(percentile(relay.healthMs, 99))} ms | |`,
  );
  for (const [name, m, cpu] of [
    ["export off", mOff, cpuOff],
    ["export on (every span at the receiver before the pass ends)", mOn, cpuOn],
  ] as const)
    console.log(
      `| ${name} | ${m.perSecond.toFixed(1)} | ${m.whole.toFixed(1)} | ${(m.perSecond * 2).toFixed(1)} | ${fmt(percentile(m.ms, 50))} ms | ${fmt(percentile(m.ms, 99))} ms | ${cpu.toFixed(1)} ms |`,
    );
  console.log(
    `passes, runs/s sustained (whole): off ${relay.off.map((p) => `${p.perSecond.toFixed(1)} (${p.whole.toFixed(1)})`).join(", ")}; on ${relay.on.map((p) => `${p.perSecond.toFixed(1)} (${p.whole.toFixed(1)})`).join(", ")}`,
  );
  console.log(`workerd RSS ${relay.rss} MiB; a run's export ${(relay.bytesPerRun / 1024).toFixed(1)} KiB of OTLP JSON`);
  console.log(
    `pairs, on ÷ off: ${ratios.map((r) => `${(r * 100).toFixed(1)}%`).join(", ")}; workerd CPU on − off: ${relay.on.map((p, i) => `${fmt(p.cpuPerRun - relay.off[i]!.cpuPerRun)} ms`).join(", ")}`,
  );
  const relayAdds = middle(relay.on.map((p, i) => p.cpuPerRun - relay.off[i]!.cpuPerRun));
  const floorAdds = floor.exported - floor.write;
  console.log("\n| one run's export, workerd CPU | per run | vs the floor |\n| --- | --- | --- |");
  console.log(`| Relay: on − off, median pair | ${fmt(relayAdds)} ms | ${(relayAdds / floorAdds).toFixed(1)}× |`);
  console.log(
    `| floor: the smallest object's write with an export queued, its alarm and POST, − the write alone (${fmt(floor.exported)} − ${fmt(floor.write)} ms) | ${fmt(floorAdds)} ms | 1.0× |`,
  );
  const best = cpuOff / (cpuOff + floorAdds);
  console.log(`\n| target, same run | measured | verdict |\n| --- | --- | --- |`);
  console.log(
    `| handoff throughput with export on ≥ 90% of off (sustained, median pair) | ${(share * 100).toFixed(1)}%, pairs ${(Math.min(...ratios) * 100).toFixed(1)}–${(Math.max(...ratios) * 100).toFixed(1)}% (at the floor's cost: ${(best * 100).toFixed(1)}%; whole passes ${(wholeShare * 100).toFixed(1)}%) | ${share >= 0.9 ? "met" : "MISSED"} |`,
  );
}

/** The Worker's bundle as deployed, and what the telemetry modules take of it. */
function bundle(): void {
  const out = mkdtempSync(join(tmpdir(), "relay-bundle-telemetry-"));
  try {
    execFileSync(
      join(root, "node_modules", ".bin", "wrangler"),
      ["deploy", "--dry-run", "--minify", "--outdir", out, "--metafile", join(out, "meta.json")],
      { cwd: root, env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" }, stdio: "ignore" },
    );
    const code = readFileSync(join(out, "index.js"));
    const meta = JSON.parse(readFileSync(join(out, "meta.json"), "utf8")) as {
      outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
    };
    const telemetry =
      /(^|\/)(src\/telemetry\/|durable-objects\/session\/telemetry\/|src\/services\/telemetry-export|src\/registry\/telemetry-config|src\/api\/telemetry|src\/schemas\/telemetry)/;
    let own = 0;
    for (const output of Object.values(meta.outputs))
      for (const [path, input] of Object.entries(output.inputs)) if (telemetry.test(path)) own += input.bytesInOutput;
    const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
    console.log("\n| bundle (wrangler deploy --dry-run --minify) | size |\n| --- | --- |");
    console.log(`| the Worker | ${kib(code.length)} (${kib(gzipSync(code).length)} gzipped) |`);
    console.log(
      `| of which trace telemetry's own modules | ${kib(own)} (${((own / code.length) * 100).toFixed(1)}%): ${kib(code.length - own)} without them |`,
    );
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
