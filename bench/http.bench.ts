/**
 * `POST /v1/route` through `wrangler dev` on loopback: 2,000 requests, 8 in flight, against
 * the demo agents. Client-side p50/p99 ms beside the server's own latency_us figure, and
 * beside `GET /health` under the same load: the baseline cost of the dev server itself.
 * BENCH_PERSIST_TO=/dev/shm/relay-bench keeps the local state on tmpfs.
 */
import { devKey, percentile, runConcurrent, startDevServer } from "./lib/wrangler-dev";

const TOTAL = 2000;
const CONCURRENCY = 8;
const inputs = [
  "I was charged twice for my subscription",
  "我想申请退款",
  "the app crashes when I open settings",
  "how much does the enterprise plan cost",
  "I want to speak to a manager",
  "hello, I need some help",
];

const server = await startDevServer(undefined, process.env.BENCH_PERSIST_TO);
try {
  const headers = { Authorization: `Bearer ${devKey()}`, "Content-Type": "application/json" };
  const serverUs: number[] = [];
  const methods = new Map<string, number>();
  const call = async (i: number) => {
    const response = await fetch(`${server.url}/v1/route`, {
      method: "POST",
      headers,
      // Rule strategy: this measures the Worker and the rule tier, not a model.
      body: JSON.stringify({ input: inputs[i % inputs.length], strategy: "rule" }),
    });
    const body = (await response.json()) as { latency_us: number; method: string };
    if (!response.ok) throw new Error(`route failed: ${response.status} ${JSON.stringify(body)}`);
    serverUs.push(body.latency_us);
    methods.set(body.method, (methods.get(body.method) ?? 0) + 1);
  };
  const health = async () => {
    await (await fetch(`${server.url}/health`)).text();
  };
  await runConcurrent(200, CONCURRENCY, health);
  const healthStarted = performance.now();
  const healthMs = await runConcurrent(TOTAL, CONCURRENCY, health);
  const healthSeconds = (performance.now() - healthStarted) / 1000;

  await runConcurrent(200, CONCURRENCY, call); // warm-up: compile the registry, JIT
  serverUs.length = 0;
  methods.clear();
  const started = performance.now();
  const ms = await runConcurrent(TOTAL, CONCURRENCY, call);
  const seconds = (performance.now() - started) / 1000;
  console.log(`\nPOST /v1/route via wrangler dev on loopback: ${TOTAL} requests, ${CONCURRENCY} in flight`);
  console.log(`| metric | POST /v1/route | baseline: GET /health, same load |\n| --- | --- | --- |`);
  console.log(`| client p50 | ${percentile(ms, 50).toFixed(2)} ms | ${percentile(healthMs, 50).toFixed(2)} ms |`);
  console.log(`| client p99 | ${percentile(ms, 99).toFixed(2)} ms | ${percentile(healthMs, 99).toFixed(2)} ms |`);
  console.log(`| throughput | ${(TOTAL / seconds).toFixed(0)} req/s | ${(TOTAL / healthSeconds).toFixed(0)} req/s |`);
  console.log(
    `| server latency_us p50 / p99 | ${percentile(serverUs, 50)} / ${percentile(serverUs, 99)} µs (Workers clock: ms resolution) |`,
  );
  console.log(`| decisions | ${[...methods].map(([m, n]) => `${m}: ${n}`).join(", ")} |`);
  console.log(`| workerd RSS | ${server.workerdRssMiB()} MiB |`);
} finally {
  await server.stop();
}
