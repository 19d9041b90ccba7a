/**
 * workerd's resident memory as sessions accumulate (issue 13, item 4): Relay on workerd
 * through Miniflare's API, sessions created 1,000 at a time (each with a handoff there and
 * back, so its object has written every table), then left idle. After each thousand it
 * prints the RSS at once and again after an idle pause, and the growth per 1,000 sessions.
 * Flat growth after the pause means an isolate keeps nothing per session it has seen.
 *
 *   npx tsx bench/memory.bench.ts            (BENCH_MEMORY_ROUNDS=3, BENCH_MEMORY_IDLE_S=30)
 */
import { startWorkerdServer } from "./lib/workerd-server";
import { runConcurrent } from "./lib/wrangler-dev";

const PORT = 8794;
const KEY = "bench-memory-key";
const PER_ROUND = 1000;
const ROUNDS = Number(process.env.BENCH_MEMORY_ROUNDS ?? 3);
const IDLE_S = Number(process.env.BENCH_MEMORY_IDLE_S ?? 30);

const server = await startWorkerdServer(PORT, KEY);
const headers = { Authorization: `Bearer ${KEY}`, "Content-Type": "application/json" };
async function api(method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${server.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await response.json().catch(() => null);
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json).slice(0, 300)}`);
  return json;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

try {
  await api("PUT", "/v1/agents/memory-a", { name: "memory-a", description: "No capacity limit.", handoffs: ["memory-b"] });
  await api("PUT", "/v1/agents/memory-b", { name: "memory-b", description: "No capacity limit." });
  const rows: string[] = [];
  const base = server.workerdRssMiB();
  rows.push(`| 0 | ${base} | ${base} | |`);
  let previousIdle = base;
  for (let round = 1; round <= ROUNDS; round++) {
    await runConcurrent(PER_ROUND, 16, async () => {
      const { id } = await api("POST", "/v1/sessions", { agent: "memory-a" });
      await api("POST", "/v1/handoffs", { session_id: id, source_agent: "memory-a", target_agent: "memory-b", reason: "memory" });
      await api("POST", "/v1/handoffs", { session_id: id, source_agent: "memory-b", mode: "return", reason: "memory" });
    });
    const busy = server.workerdRssMiB();
    await sleep(IDLE_S * 1000);
    const idle = server.workerdRssMiB();
    rows.push(`| ${round * PER_ROUND} | ${busy} | ${idle} | ${idle - previousIdle} |`);
    previousIdle = idle;
  }
  console.log(`\nworkerd RSS (MiB) via Miniflare as sessions accumulate; idle pause ${IDLE_S} s after each ${PER_ROUND}`);
  console.log("| sessions seen | RSS right after | RSS after the pause | growth per 1,000 (after the pause) |\n| --- | --- | --- | --- |");
  for (const row of rows) console.log(row);
} finally {
  await server.stop();
}
