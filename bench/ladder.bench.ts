/**
 * A ladder of requests, each one step heavier than the last, 16 in flight on workerd
 * (Miniflare's API, no dev proxy), each beside `GET /health` measured in the same run:
 * the step where throughput falls names the cost. Rungs: the Worker alone; a
 * cached registry read; a D1 read; a session object read; a session commit with an audit
 * record; a state patch (a commit, then condition triggers evaluated and the timeout timer
 * re-armed); a handoff between two agents without a capacity limit (no AgentDO call);
 * session creation.
 *
 *   npx tsx bench/ladder.bench.ts
 */
import { apiClient } from "./lib/api-client";
import { startWorkerdServer } from "./lib/workerd-server";
import { type Load, measureLoad } from "./lib/wrangler-dev";

const PORT = 8797;
const KEY = "bench-ladder-key";
const SESSIONS = 200;
const CALLS = 2000;
const CONCURRENCY = 16;

const server = await startWorkerdServer(PORT, KEY);
const api = apiClient(server.url, KEY).ok;

interface Rung extends Load {
  name: string;
}

async function rung(name: string, calls: number, task: (i: number) => Promise<unknown>): Promise<Rung> {
  return { name, ...(await measureLoad(calls, CONCURRENCY, task)) };
}

try {
  await api("PUT", "/v1/agents/ladder-a", {
    name: "ladder-a",
    description: "No capacity limit.",
    handoffs: ["ladder-b"],
  });
  await api("PUT", "/v1/agents/ladder-b", { name: "ladder-b", description: "No capacity limit." });
  for (let i = 0; i < 200; i++) await fetch(`${server.url}/health`).then((r) => r.text());

  const ids: string[] = new Array(SESSIONS);
  const rungs: Rung[] = [];
  rungs.push(
    await rung(
      "session creation (no capacity limit)",
      SESSIONS,
      async (i) => (ids[i] = (await api("POST", "/v1/sessions", { agent: "ladder-a" })).id),
    ),
  );
  const health = await rung("GET /health", CALLS, () => fetch(`${server.url}/health`).then((r) => r.text()));
  rungs.unshift(health);
  rungs.push(await rung("GET /v1/route/stats (auth, cached registry)", CALLS, () => api("GET", "/v1/route/stats")));
  rungs.push(await rung("GET /v1/agents?limit=1 (a D1 read)", CALLS, () => api("GET", "/v1/agents?limit=1")));
  rungs.push(
    await rung("GET /v1/sessions/:id (a session read)", CALLS, (i) => api("GET", `/v1/sessions/${ids[i % SESSIONS]}`)),
  );
  rungs.push(
    await rung("POST …/agent-status (a commit with an audit record)", CALLS, (i) =>
      api("POST", `/v1/sessions/${ids[i % SESSIONS]}/agent-status`, {
        agent: "ladder-a",
        status: i % 2 === 0 ? "busy" : "idle",
      }),
    ),
  );
  rungs.push(
    await rung("PATCH …/state (commit, triggers, timer)", CALLS, (i) =>
      api("PATCH", `/v1/sessions/${ids[i % SESSIONS]}/state`, { set: { n: i } }),
    ),
  );
  const hops = new Array<number>(SESSIONS).fill(0);
  rungs.push(
    await rung("POST /v1/handoffs (no capacity limit)", CALLS, async (i) => {
      const k = i % SESSIONS;
      hops[k] = (hops[k] ?? 0) + 1;
      const back = hops[k] % 2 === 0;
      const body = back
        ? { session_id: ids[k], source_agent: "ladder-b", mode: "return", reason: "ladder" }
        : { session_id: ids[k], source_agent: "ladder-a", target_agent: "ladder-b", reason: "ladder" };
      await api("POST", "/v1/handoffs", body);
    }),
  );

  console.log(`\nRequest ladder on workerd via Miniflare's API (no proxy, state in memory), ${CONCURRENCY} in flight`);
  console.log("| request | p50 ms | throughput | vs /health |\n| --- | --- | --- | --- |");
  for (const r of rungs)
    console.log(
      `| ${r.name} | ${r.p50.toFixed(1)} | ${r.rate.toFixed(0)}/s | ${((r.rate / health.rate) * 100).toFixed(0)}% |`,
    );
} finally {
  await server.stop();
}
