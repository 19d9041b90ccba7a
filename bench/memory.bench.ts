/**
 * Memory as sessions accumulate (docs/benchmarks.md, Memory): Relay on workerd through Miniflare's
 * API, sessions created 1,000 at a time (each with a handoff there and back, so its object
 * has written every table), then left idle. After each thousand, and again after an idle
 * pause, it prints workerd's resident memory and the isolate's JS heap in use (through
 * the inspector): the heap is what the Worker and its objects keep per session
 * they have seen; RSS also holds workerd's own caches. Storage is on disk by default, as
 * in production (BENCH_MEMORY_STORAGE=memory puts it on tmpfs: in the machine's memory,
 * though not in workerd's RSS). The baseline, in the same run: as many of the smallest
 * SQLite-backed Durable Objects, with the same pauses.
 *
 *   npx tsx bench/memory.bench.ts            (BENCH_MEMORY_ROUNDS=3, BENCH_MEMORY_IDLE_S=30)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiClient } from "./lib/api-client";
import { startBaselineObjects } from "./lib/baseline-object";
import { inspector } from "./lib/inspector";
import { startWorkerdServer } from "./lib/workerd-server";
import { runConcurrent } from "./lib/wrangler-dev";

const PORT = 8794;
const INSPECTOR_PORT = 9233;
const KEY = "bench-memory-key";
const PER_ROUND = 1000;
const ROUNDS = Number(process.env.BENCH_MEMORY_ROUNDS ?? 3);
const IDLE_S = Number(process.env.BENCH_MEMORY_IDLE_S ?? 30);
const ON_DISK = process.env.BENCH_MEMORY_STORAGE !== "memory";

const persist = ON_DISK ? mkdtempSync(join(tmpdir(), "relay-bench-memory-")) : undefined;
const server = await startWorkerdServer(PORT, KEY, {}, INSPECTOR_PORT, persist);
const devtools = await inspector(INSPECTOR_PORT);
const api = apiClient(server.url, KEY).ok;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const MiB = 1024 * 1024;

/**
 * The isolate's JS heap in use, in MiB (workerd's inspector does not answer a forced collection; after
 * the idle pause V8 has collected on its own).
 */
async function heapMiB(): Promise<number> {
  const { usedSize } = (await devtools.send("Runtime.getHeapUsage")) as { usedSize: number };
  return Math.round((usedSize / MiB) * 10) / 10;
}

try {
  await api("PUT", "/v1/agents/memory-a", {
    name: "memory-a",
    description: "No capacity limit.",
    handoffs: ["memory-b"],
  });
  await api("PUT", "/v1/agents/memory-b", { name: "memory-b", description: "No capacity limit." });
  const rows: string[] = [];
  const base = { rss: server.workerdRssMiB(), heap: await heapMiB() };
  rows.push(`| 0 | ${base.rss} | ${base.rss} | | ${base.heap} | |`);
  let previous = base;
  for (let round = 1; round <= ROUNDS; round++) {
    await runConcurrent(PER_ROUND, 16, async () => {
      const { id } = await api("POST", "/v1/sessions", { agent: "memory-a" });
      await api("POST", "/v1/handoffs", {
        session_id: id,
        source_agent: "memory-a",
        target_agent: "memory-b",
        reason: "memory",
      });
      await api("POST", "/v1/handoffs", { session_id: id, source_agent: "memory-b", mode: "return", reason: "memory" });
    });
    const busy = server.workerdRssMiB();
    await sleep(IDLE_S * 1000);
    const idle = { rss: server.workerdRssMiB(), heap: await heapMiB() };
    rows.push(
      `| ${round * PER_ROUND} | ${busy} | ${idle.rss} | ${idle.rss - previous.rss} | ${idle.heap} | ${(idle.heap - previous.heap).toFixed(1)} |`,
    );
    previous = idle;
  }
  console.log(
    `\nMemory on workerd via Miniflare as sessions accumulate (storage ${ON_DISK ? "on disk" : "in memory"}); idle pause ${IDLE_S} s after each ${PER_ROUND}`,
  );
  console.log(
    "| sessions seen | RSS right after (MiB) | RSS after the pause | RSS growth per 1,000 | JS heap in use (MiB) | heap growth per 1,000 |",
  );
  console.log("| --- | --- | --- | --- | --- | --- |");
  for (const row of rows) console.log(row);
} finally {
  devtools.close();
  await server.stop();
  if (persist) rmSync(persist, { recursive: true, force: true });
}

// The baseline: the same number of the smallest SQLite-backed objects (one table, one row),
// the same pauses, on the same workerd. What grows here too is workerd's, not Relay's.
const plainPersist = ON_DISK ? mkdtempSync(join(tmpdir(), "relay-bench-memory-plain-")) : undefined;
const plain = await startBaselineObjects(PORT + 1, plainPersist);
try {
  const rows: string[] = [];
  let previous = plain.workerdRssMiB();
  rows.push(`| 0 | ${previous} | ${previous} | |`);
  for (let round = 1; round <= ROUNDS; round++) {
    await runConcurrent(PER_ROUND, 16, async (i) => {
      const response = await fetch(`${plain.url}/objects/plain-${round}-${i}`, { method: "POST" });
      if (!response.ok) throw new Error(`baseline object: ${response.status}`);
      await response.text();
    });
    const busy = plain.workerdRssMiB();
    await sleep(IDLE_S * 1000);
    const idle = plain.workerdRssMiB();
    rows.push(`| ${round * PER_ROUND} | ${busy} | ${idle} | ${idle - previous} |`);
    previous = idle;
  }
  console.log(
    `\nBaseline, same run: the smallest SQLite-backed Durable Object (one table, one row), ${PER_ROUND} at a time, same pauses`,
  );
  console.log(
    "| objects seen | RSS right after (MiB) | RSS after the pause | RSS growth per 1,000 |\n| --- | --- | --- | --- |",
  );
  for (const row of rows) console.log(row);
} finally {
  await plain.stop();
  if (plainPersist) rmSync(plainPersist, { recursive: true, force: true });
}
