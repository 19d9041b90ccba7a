/**
 * Handoffs across many tenants on 1 and on 4 D1 shards (docs/scaling.md, Shards), on workerd
 * through Miniflare's API (state in memory), beside `GET /health` under the same load in the
 * same run. TENANTS tenants, each with SESSIONS sessions of its own and two agents that hand
 * the session back and forth; CONCURRENCY callers, each owning its sessions (a session takes
 * one handoff at a time). Measured, for each shard count:
 *
 * - handoffs a second deployment-wide, and the p50 of one, beside /health;
 * - the D1 flush lag: from the last handoff's answer until every handoff is in the shards'
 *   `handoffs` index (the sessions' outboxes flush on their own schedule).
 *
 * Local D1 is SQLite inside the same workerd process, on its thread: more shards here are
 * more files, not more machines. What it shows is that the shard path costs a request
 * nothing; the write rate a shard adds in production is D1's, per database.
 *
 *   npx tsx bench/shards.bench.ts
 */
import { apiClient } from "./lib/api-client";
import { startWorkerdServer } from "./lib/workerd-server";
import { type Load, measureLoad, percentile } from "./lib/wrangler-dev";

const PORT = Number(process.env.BENCH_PORT ?? 8832);
const TENANTS = 16;
const SESSIONS = 8;
const HANDOFFS = 2_400;
const CONCURRENCY = 16;
const LAG_POLL_MS = 50;
const LAG_LIMIT_MS = 120_000;

const keyOf = (t: number) => `bench-shard-tenant-${t}-key`;

interface Result {
  shards: number;
  health: Load;
  handoffs: Load;
  lagMs: number;
  perShard: number[];
}

async function run(shards: number): Promise<Result> {
  const keys = Array.from({ length: TENANTS }, (_, t) => `t${t}:${keyOf(t)}`).join(",");
  const server = await startWorkerdServer(
    PORT,
    "bench-shards-dev-key",
    { RELAY_API_KEYS: `dev:bench-shards-dev-key,${keys}` },
    undefined,
    undefined,
    undefined,
    true,
    undefined,
    0,
    shards,
  );
  try {
    const clients = Array.from({ length: TENANTS }, (_, t) => apiClient(server.url, keyOf(t)));
    // Every tenant's agents and sessions: TENANTS × SESSIONS, each with whoever holds it now.
    const sessions: { client: (typeof clients)[number]; id: string; holder: string }[] = [];
    for (const client of clients) {
      await client.ok("PUT", "/v1/agents/desk", { name: "desk", description: "The front desk.", handoffs: ["clerk"] });
      await client.ok("PUT", "/v1/agents/clerk", {
        name: "clerk",
        description: "The back office.",
        handoffs: ["desk"],
      });
      for (let s = 0; s < SESSIONS; s++)
        sessions.push({ client, id: (await client.ok("POST", "/v1/sessions", { agent: "desk" })).id, holder: "desk" });
    }
    const health = () => fetch(`${server.url}/health`).then((r) => r.text());
    for (let i = 0; i < 200; i++) await health();
    const healthLoad = await measureLoad(HANDOFFS, CONCURRENCY, health);

    // Caller c owns sessions c, c + CONCURRENCY, …: one handoff at a time on each session.
    const perCaller = HANDOFFS / CONCURRENCY;
    const owned = (c: number) => sessions.filter((_, i) => i % CONCURRENCY === c);
    const started = performance.now();
    const durations: number[] = [];
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, c) => {
        const mine = owned(c);
        for (let n = 0; n < perCaller; n++) {
          const session = mine[n % mine.length]!;
          const target = session.holder === "desk" ? "clerk" : "desk";
          const at = performance.now();
          // To the clerk, then a return to the desk: a chain never grows.
          await session.client.ok(
            "POST",
            "/v1/handoffs",
            target === "clerk"
              ? {
                  session_id: session.id,
                  source_agent: "desk",
                  target_agent: "clerk",
                  reason: "bench: to the back office",
                }
              : { session_id: session.id, source_agent: "clerk", mode: "return", reason: "bench: back to the desk" },
          );
          durations.push(performance.now() - at);
          session.holder = target;
        }
      }),
    );
    const ended = performance.now();
    const handoffs: Load = { p50: percentile(durations, 50), rate: HANDOFFS / ((ended - started) / 1000) };

    // Flush lag: until the shards' handoff index holds every handoff made.
    const databases = await server.shardDatabases();
    const count = async () =>
      Promise.all(
        databases.map(async (db) => (await db.prepare("SELECT COUNT(*) AS n FROM handoffs").first<number>("n")) ?? 0),
      );
    let perShard = await count();
    while (perShard.reduce((a, b) => a + b, 0) < HANDOFFS && performance.now() - ended < LAG_LIMIT_MS) {
      await new Promise((resolve) => setTimeout(resolve, LAG_POLL_MS));
      perShard = await count();
    }
    const total = perShard.reduce((a, b) => a + b, 0);
    if (total < HANDOFFS) throw new Error(`only ${total} of ${HANDOFFS} handoffs reached D1 in ${LAG_LIMIT_MS} ms`);
    return { shards, health: healthLoad, handoffs, lagMs: performance.now() - ended, perShard };
  } finally {
    await server.stop();
  }
}

const results: Result[] = [];
for (const shards of [1, 4]) results.push(await run(shards));

console.log(
  `\nHandoffs across ${TENANTS} tenants (${SESSIONS} sessions each), ${CONCURRENCY} in flight, ${HANDOFFS} handoffs, on workerd (state in memory)`,
);
console.log(
  "| shards | GET /health per s | handoffs per s | vs /health | handoff p50 ms | /health p50 ms | D1 flush lag ms | handoffs per shard |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const r of results)
  console.log(
    `| ${r.shards} | ${r.health.rate.toFixed(0)} | ${r.handoffs.rate.toFixed(0)} | ${((r.handoffs.rate / r.health.rate) * 100).toFixed(1)}% | ${r.handoffs.p50.toFixed(2)} | ${r.health.p50.toFixed(2)} | ${r.lagMs.toFixed(0)} | ${r.perShard.join(" / ")} |`,
  );
const [one, four] = results as [Result, Result];
console.log(
  `\n4 shards vs 1: handoffs per s ${(four.handoffs.rate / one.handoffs.rate).toFixed(2)}×, flush lag ${(four.lagMs / one.lagMs).toFixed(2)}×`,
);
