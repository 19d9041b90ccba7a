/**
 * What capacity shards cost near full capacity (docs/handoffs.md, Capacity
 * shards for hot agents), on workerd (Miniflare's API, state in memory), beside `GET /health`
 * under the same load in the same run. A session's acquire tries its home shard, then the
 * others one at a time, so as an agent fills, the walk gets longer, and a refused acquire
 * visits every shard.
 *
 * - Filling an agent of 4,000 sessions (16 shards of 250): session creation in the first
 *   and the last tenth of the fill, where most homes are full and the walk spills over.
 * - Refused handoffs, once full: to the 16-shard agent (every shard asked) against one to a
 *   full agent of 250 (one object asked), same sessions, same load. Their difference over
 *   15 is what one more shard in the walk costs.
 *
 *   npx tsx bench/capacity-shards.bench.ts
 */
import { apiClient } from "./lib/api-client";
import { startWorkerdServer } from "./lib/workerd-server";
import { type Load, measureLoad, runConcurrent } from "./lib/wrangler-dev";

const PORT = 8796;
const KEY = "bench-shards-key";
const HOT = 4_000;
const SOLO = 250;
const CALLERS = 200;
const REFUSALS = 1_000;
const CONCURRENCY = 16;

const server = await startWorkerdServer(PORT, KEY);
const { call, ok } = apiClient(server.url, KEY);

const health = () => fetch(`${server.url}/health`).then((r) => r.text());

/** A handoff the target's capacity must refuse (the session stays with `desk`). */
async function refused(session: string, target: string): Promise<void> {
  const reply = await call("POST", "/v1/handoffs", {
    session_id: session,
    source_agent: "desk",
    target_agent: target,
    reason: "bench: full",
  });
  if (reply.json?.error?.details?.reason !== "at_capacity")
    throw new Error(`expected at_capacity, got ${reply.status} ${JSON.stringify(reply.json).slice(0, 300)}`);
}

try {
  await ok("PUT", "/v1/agents/hot", {
    name: "hot",
    description: "A hot agent: 16 capacity shards.",
    max_concurrent_sessions: HOT,
  });
  await ok("PUT", "/v1/agents/solo", {
    name: "solo",
    description: "One capacity object.",
    max_concurrent_sessions: SOLO,
  });
  await ok("PUT", "/v1/agents/desk", { name: "desk", description: "No capacity limit.", handoffs: ["hot", "solo"] });
  for (let i = 0; i < 200; i++) await health();

  // Filling: creation time by tenth of the fill (16 in flight, so a tenth's figures are its own).
  const tenths: Load[] = [];
  for (let t = 0; t < 10; t++)
    tenths.push(await measureLoad(HOT / 10, CONCURRENCY, () => ok("POST", "/v1/sessions", { agent: "hot" })));
  const over = await call("POST", "/v1/sessions", { agent: "hot" });
  if (over.json?.error?.details?.reason !== "at_capacity")
    throw new Error(`the hot agent took session ${HOT + 1}: ${over.status}`);
  await runConcurrent(SOLO, CONCURRENCY, async () => {
    await ok("POST", "/v1/sessions", { agent: "solo" });
  });

  const callers: string[] = [];
  await runConcurrent(CALLERS, CONCURRENCY, async (i) => {
    callers[i] = (await ok("POST", "/v1/sessions", { agent: "desk" })).id;
  });
  const at = (i: number) => callers[i % CALLERS]!;

  // Interleaved so that drift in the machine's speed falls on both alike.
  const rows = { health: [] as Load[], one: [] as Load[], sixteen: [] as Load[] };
  const solo = { health: [] as Load[], one: [] as Load[], sixteen: [] as Load[] };
  for (let pass = 0; pass < 2; pass++) {
    rows.health.push(await measureLoad(REFUSALS, CONCURRENCY, health));
    rows.one.push(await measureLoad(REFUSALS, CONCURRENCY, (i) => refused(at(i), "solo")));
    rows.sixteen.push(await measureLoad(REFUSALS, CONCURRENCY, (i) => refused(at(i), "hot")));
    solo.health.push(await measureLoad(200, 1, health));
    solo.one.push(await measureLoad(200, 1, (i) => refused(at(i), "solo")));
    solo.sixteen.push(await measureLoad(200, 1, (i) => refused(at(i), "hot")));
  }
  const best = (xs: Load[]): Load => xs.reduce((a, b) => (b.rate > a.rate ? b : a));
  const h16 = best(rows.health);
  const h1 = best(solo.health);

  console.log(`\nCapacity shards on workerd via Miniflare's API (state in memory)`);
  console.log(
    `\nFilling 'hot' (${HOT} sessions, 16 shards of 250), ${CONCURRENCY} in flight: session creation by tenth of the fill`,
  );
  console.log("| tenth | p50 ms | sessions/s |");
  console.log("| --- | --- | --- |");
  for (const [i, t] of tenths.entries()) console.log(`| ${i + 1} | ${t.p50.toFixed(2)} | ${t.rate.toFixed(0)} |`);
  console.log(
    `| last / first | ${(tenths[9]!.p50 / tenths[0]!.p50).toFixed(2)}× | ${(tenths[9]!.rate / tenths[0]!.rate).toFixed(2)}× |`,
  );

  const one1 = best(solo.one);
  const sixteen1 = best(solo.sixteen);
  const one16 = best(rows.one);
  const sixteen16 = best(rows.sixteen);
  console.log(`\nRefused handoffs once full (the better of 2 interleaved passes), beside GET /health in the same run`);
  console.log("| request | 1 in flight: p50 ms | vs /health | 16 in flight: per s | vs /health |");
  console.log("| --- | --- | --- | --- | --- |");
  console.log(`| GET /health | ${h1.p50.toFixed(2)} | 1.0× | ${h16.rate.toFixed(0)} | 100% |`);
  console.log(
    `| handoff refused by a full agent of ${SOLO} (one object asked) | ${one1.p50.toFixed(2)} | ${(one1.p50 / h1.p50).toFixed(1)}× | ${one16.rate.toFixed(0)} | ${((one16.rate / h16.rate) * 100).toFixed(0)}% |`,
  );
  console.log(
    `| handoff refused by a full agent of ${HOT} (16 shards asked in turn) | ${sixteen1.p50.toFixed(2)} | ${(sixteen1.p50 / h1.p50).toFixed(1)}× | ${sixteen16.rate.toFixed(0)} | ${((sixteen16.rate / h16.rate) * 100).toFixed(0)}% |`,
  );
  console.log(
    `| one more shard in the walk: (16 − 1) / 15 | ${((sixteen1.p50 - one1.p50) / 15).toFixed(2)} | ${((sixteen1.p50 - one1.p50) / 15 / h1.p50).toFixed(2)}× | | |`,
  );
} finally {
  await server.stop();
}
