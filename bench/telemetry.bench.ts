/**
 * What trace export costs (docs/benchmarks.md, Trace export; docs/observability.md): runs
 * with handoffs on workerd through Miniflare's API, with the tenant's export off and on, in
 * interleaved passes of the same server — a fake OpenAI-compatible model and an OTLP/HTTP
 * receiver in a process of their own, answering at once — beside `GET /health` under the same
 * load.
 *
 *   npx tsx bench/telemetry.bench.ts
 *
 * Each run is one user message on a fresh session: agent a hands off to b, b to c, c answers
 * (3 model calls, 2 handoffs, 8 spans). A pass times RUNS runs, CONCURRENCY in flight; with
 * export on, its window ends only when the receiver holds every span of the pass, so the
 * export's own work (its alarms, the OTLP requests) is inside the figure. Off and on alternate
 * PASSES times; the median pass of each is kept. Then the bundle: the Worker as
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
import { chatCompletion } from "./lib/chat-completion";
import { spawnRole } from "./lib/child-role";
import { startWorkerdServer } from "./lib/workerd-server";
import { percentile, runConcurrent } from "./lib/wrangler-dev";

const KEY = "bench-telemetry-key";
const PORT = 8805;
const FAKES_PORT = 8806;
const RUNS = 150;
const PASSES = 3;
const CONCURRENCY = 4;
const SPANS_PER_RUN = 8;
const root = join(import.meta.dirname, "..");

if (process.env.BENCH_ROLE === "fakes") {
  // The model scripts the chain; the receiver counts spans (an empty ExportTraceServiceResponse).
  let calls = 0;
  let spans = 0;
  createServer((req, res) => {
    let text = "";
    req.on("data", (chunk) => (text += chunk));
    req.on("end", () => {
      if (req.url === "/stats") {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ spans }));
      }
      if (req.url === "/v1/traces") {
        const body = JSON.parse(text) as { resourceSpans: { scopeSpans: { spans: unknown[] }[] }[] };
        for (const r of body.resourceSpans) for (const s of r.scopeSpans) spans += s.spans.length;
        res.writeHead(200, { "content-type": "application/json" });
        return res.end("{}");
      }
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
  const fakesUrl = `http://127.0.0.1:${FAKES_PORT}`;
  const server = await startWorkerdServer(PORT, KEY, {
    OPENAI_BASE_URL: `${fakesUrl}/v1`,
    OPENAI_API_KEY: "sk-bench",
    RELAY_ALLOW_LOCAL_ENDPOINTS: "true",
  });
  const api = apiClient(`${server.url}/v1`, KEY).call;
  const received = async () => ((await (await fetch(`${fakesUrl}/stats`)).json()) as { spans: number }).spans;
  try {
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
        ? await api("PUT", "/config/telemetry", { endpoint: `${fakesUrl}/v1/traces` })
        : await api("DELETE", "/config/telemetry");
      if (res.status >= 300) throw new Error(`telemetry config: ${JSON.stringify(res.json)}`);
      // Past the isolate's one-second cache of the settings (docs/observability.md, What is sent).
      await new Promise((r) => setTimeout(r, 1_100));
    };

    /** One pass: RUNS chains; with export on, until the receiver has all their spans. Runs per second. */
    async function pass(on: boolean): Promise<{ perSecond: number; ms: number[] }> {
      const sessions: string[] = [];
      for (let i = 0; i < RUNS; i++) {
        const created = await api("POST", "/sessions", { agent: "bench-a", ttl_s: 600 });
        if (created.status !== 201) throw new Error(`session: ${JSON.stringify(created.json)}`);
        sessions.push(created.json.id);
      }
      const before = await received();
      const start = performance.now();
      const ms = await runConcurrent(RUNS, CONCURRENCY, async (i) => {
        const res = await api("POST", `/sessions/${sessions[i]}/messages`, { role: "user", content: "hello" });
        const handoffs = (res.json?.run?.events ?? []).filter(
          (e: { event_type: string }) => e.event_type === "handoff",
        );
        if (res.json?.run?.status !== "completed" || handoffs.length !== 2)
          throw new Error(`run not as scripted: ${JSON.stringify(res.json).slice(0, 400)}`);
      });
      const want = on ? before + RUNS * SPANS_PER_RUN : before;
      while ((await received()) < want) {
        if (performance.now() - start > 120_000)
          throw new Error(`spans: ${(await received()) - before} of ${want - before}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      const seconds = (performance.now() - start) / 1000;
      if (!on && (await received()) !== before) throw new Error("spans were exported with export off");
      return { perSecond: RUNS / seconds, ms };
    }

    const health = async () => {
      await (await fetch(`${server.url}/health`)).text();
    };
    await runConcurrent(200, CONCURRENCY, health);
    await exportOn(true);
    await pass(true);
    const off: { perSecond: number; ms: number[] }[] = [];
    const on: { perSecond: number; ms: number[] }[] = [];
    for (let i = 0; i < PASSES; i++) {
      await exportOn(false);
      off.push(await pass(false));
      await exportOn(true);
      on.push(await pass(true));
    }
    const healthStart = performance.now();
    const healthMs = await runConcurrent(RUNS * 10, CONCURRENCY, health);
    const healthPerSecond = (RUNS * 10) / ((performance.now() - healthStart) / 1000);
    const median = (passes: { perSecond: number; ms: number[] }[]) =>
      [...passes].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(passes.length / 2)]!;
    const mOff = median(off);
    const mOn = median(on);
    const share = mOn.perSecond / mOff.perSecond;
    const fmt = (n: number) => n.toFixed(2);
    console.log(
      `\nTrace export on workerd via Miniflare's API: ${RUNS} runs a pass (3 model calls, 2 handoffs each), ${CONCURRENCY} in flight, ${PASSES} passes each way, median pass`,
    );
    console.log("| measure | runs/s | handoffs/s | run p50 | run p99 |\n| --- | --- | --- | --- | --- |");
    console.log(
      `| baseline: GET /health, same load | ${healthPerSecond.toFixed(0)} req/s | | ${fmt(percentile(healthMs, 50))} ms | ${fmt(percentile(healthMs, 99))} ms |`,
    );
    for (const [name, m] of [
      ["export off", mOff],
      ["export on (every span at the receiver before the pass ends)", mOn],
    ] as const)
      console.log(
        `| ${name} | ${m.perSecond.toFixed(1)} | ${(m.perSecond * 2).toFixed(1)} | ${fmt(percentile(m.ms, 50))} ms | ${fmt(percentile(m.ms, 99))} ms |`,
      );
    console.log(
      `passes, runs/s: off ${off.map((p) => p.perSecond.toFixed(1)).join(", ")}; on ${on.map((p) => p.perSecond.toFixed(1)).join(", ")}`,
    );
    console.log(`workerd RSS ${server.workerdRssMiB()} MiB`);
    console.log(`\n| target, same run | measured | verdict |\n| --- | --- | --- |`);
    console.log(
      `| handoff throughput with export on ≥ 90% of off | ${(share * 100).toFixed(1)}% | ${share >= 0.9 ? "met" : "MISSED"} |`,
    );
  } finally {
    await server.stop();
    fakes.kill();
  }
  bundle();
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
