/**
 * What a handoff's audit costs on its way to D1, in workerd CPU, beside `GET /health` in
 * the same run. Local D1 runs inside the same workerd process as Relay, on the
 * same thread, so the handoffs bench's CPU per handoff includes D1's own work, while the
 * CPU profile of Relay's isolate (bench/profile-handoffs.ts) does not see it. In production
 * D1's work is not the Worker's CPU. Three requests to a small Worker on a migrated D1:
 *
 * - `GET /health`: the baseline, the Worker alone;
 * - the floor of any D1 batch: one `SELECT 1`;
 * - the flush of one busy session's window: ten immediate handoffs, their forty
 *   `handoff.*` records (made by Relay's own record builder) through Relay's own
 *   `writeAuditBatch`, so the sessions and handoffs index upserts ride along as they do
 *   when a session's outbox flushes.
 *
 * Each is the workerd CPU per request (user + system, /proc), median of 3 interleaved
 * passes; a D1 request's own cost is its CPU minus `/health`'s.
 *
 *   npx tsx bench/d1-flush.bench.ts
 */

import { rmSync } from "node:fs";
import { join } from "node:path";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { unstable_readConfig } from "wrangler";
import { bundleWorker } from "./lib/workerd-compile";
import { memoryStateFolder, migrationStatements } from "./lib/workerd-server";
import { runConcurrent, workerdCpu } from "./lib/wrangler-dev";

const PORT = 8799;
const CALLS = 600;
const CONCURRENCY = 16;
const PASSES = 3;
const HANDOFFS_PER_FLUSH = 10;

const WORKER = `
import { writeAuditBatch } from "./src/audit/d1-store";
import { handoffTransitioned } from "./src/audit/handoff-events";

const ACTOR = { actor: "api", actor_type: "user" };
const STEPS = [
  { action: "handoff.initiated", from: null, to: "initiated" },
  { action: "handoff.validated", from: "initiated", to: "validating" },
  { action: "handoff.transferring", from: "validating", to: "transferring" },
  { action: "handoff.completed", from: "transferring", to: "completed" },
];

/** The records of one session's flush window: ${HANDOFFS_PER_FLUSH} handoffs, each through its four transitions. */
function windowOf(session) {
  const scope = { tenant: "dev", session_id: session };
  const records = [];
  for (let h = 0; h < ${HANDOFFS_PER_FLUSH}; h++) {
    const now = Date.now();
    const subject = { id: "hof_" + session + "_" + h, source: h % 2 ? "sales" : "triage", target: h % 2 ? "triage" : "sales", mode: "transfer", policy: "immediate", created_at: new Date(now).toISOString() };
    STEPS.forEach((step, i) => records.push(handoffTransitioned(scope, ACTOR, now, subject, step, i === 0 ? { request_reason: "bench" } : {})));
  }
  return records;
}

export default {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    if (pathname === "/health") return new Response("ok");
    if (pathname === "/d1/floor") await env.DB.batch([env.DB.prepare("SELECT 1")]);
    else await writeAuditBatch(env.DB, windowOf(pathname.split("/").pop()));
    return new Response("ok");
  },
};`;

const config = unstable_readConfig({ config: join(import.meta.dirname, "..", "wrangler.toml") });
const state = memoryStateFolder("relay-bench-d1-");
const mf = new Miniflare({
  ...convertV4MiniflareOptions({
    host: "127.0.0.1",
    port: PORT,
    modules: true,
    script: await bundleWorker(WORKER),
    compatibilityDate: config.compatibility_date!,
    d1Databases: { DB: "relay" },
  }),
  resourcePersistencePath: state,
});

/** Workerd CPU (µs) per call of `path`, `CALLS` calls at `CONCURRENCY` in flight. */
async function cpuPerCall(url: string, path: (i: number) => string): Promise<number> {
  const before = workerdCpu(process.pid);
  await runConcurrent(CALLS, CONCURRENCY, async (i) => {
    const response = await fetch(url + path(i));
    if (!response.ok) throw new Error(`${path(i)}: ${response.status} ${await response.text()}`);
    await response.text();
  });
  return ((workerdCpu(process.pid) - before) / CALLS) * 1000;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

try {
  const url = (await mf.ready).toString().replace(/\/$/, "");
  const db = await mf.getD1Database("DB");
  for (const statement of migrationStatements()) await db.prepare(statement).run();
  await cpuPerCall(url, (i) => `/flush/warm-${i}`);
  const health: number[] = [];
  const floor: number[] = [];
  const flush: number[] = [];
  for (let pass = 0; pass < PASSES; pass++) {
    health.push(await cpuPerCall(url, () => "/health"));
    floor.push(await cpuPerCall(url, () => "/d1/floor"));
    flush.push(await cpuPerCall(url, (i) => `/flush/ses-${pass}-${i}`));
  }
  const h = median(health);
  const own = (xs: number[]) => median(xs) - h;
  const perHandoff = own(flush) / HANDOFFS_PER_FLUSH;
  console.log(
    `\nD1 on workerd via Miniflare's API (state in memory), ${CONCURRENCY} in flight, workerd CPU per request, median of ${PASSES} interleaved passes`,
  );
  console.log("| request | CPU | its own, minus /health's | vs /health |");
  console.log("| --- | --- | --- | --- |");
  console.log(`| GET /health | ${h.toFixed(0)} µs | - | 1.0× |`);
  console.log(
    `| a D1 batch of one SELECT 1 (floor of any flush) | ${median(floor).toFixed(0)} µs | ${own(floor).toFixed(0)} µs | ${(own(floor) / h).toFixed(2)}× |`,
  );
  console.log(
    `| the flush of ${HANDOFFS_PER_FLUSH} handoffs (${HANDOFFS_PER_FLUSH * 4} audit rows + index upserts, one batch) | ${median(flush).toFixed(0)} µs | ${own(flush).toFixed(0)} µs | ${(own(flush) / h).toFixed(2)}× |`,
  );
  console.log(`| … per handoff | | ${perHandoff.toFixed(0)} µs | ${(perHandoff / h).toFixed(2)}× |`);
} finally {
  await mf.dispose();
  rmSync(state, { recursive: true, force: true });
}
