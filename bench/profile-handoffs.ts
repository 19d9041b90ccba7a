/**
 * Where a handoff's CPU goes: Relay on workerd (Miniflare's API), 1,000 handoffs between two
 * agents without a capacity limit, 16 in flight, under the V8 sampling profiler of workerd's
 * inspector. Prints the share of samples per step (registry read, commit, AgentDO calls,
 * outbox flush, the Worker's own part), per function (self and inclusive), and the SQL time
 * by the method that ran the statement. On one isolate, throughput is the inverse of the
 * CPU a request costs, so this is the map for making handoffs cheaper.
 *
 *   npx tsx bench/profile-handoffs.ts
 *   PROFILE_CAPACITY=500 npx tsx bench/profile-handoffs.ts   (the target has a limit: leases)
 *   PROFILE_KIND=sessions npx tsx bench/profile-handoffs.ts   (session creation)
 *   PROFILE_KIND=trace npx tsx bench/profile-handoffs.ts   (one handoff at a time, each under its
 *     own profile: the mean time of one handoff per step, idle waits included; with
 *     PROFILE_CAPACITY, of a handoff that takes a lease)
 */

import { apiClient } from "./lib/api-client";
import { inspector } from "./lib/inspector";
import { startWorkerdServer } from "./lib/workerd-server";
import { runConcurrent } from "./lib/wrangler-dev";

const PORT = Number(process.env.BENCH_PORT ?? 8798);
const INSPECTOR_PORT = Number(process.env.BENCH_INSPECTOR_PORT ?? 9232);
const KEY = "bench-profile-key";
const SESSIONS = 100;
const HANDOFFS = 1000;
/** PROFILE_KIND=sessions profiles 1,000 session creations instead. */
const KIND = process.env.PROFILE_KIND ?? "handoffs";
/** PROFILE_CAPACITY=N gives the target a capacity limit, so each handoff takes a lease (AgentDO calls). */
const CAPACITY = Number(process.env.PROFILE_CAPACITY ?? 0) || null;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount: number;
  children?: number[];
}

/** A V8 CPU profile: the call tree, and each sample's node with the µs since the previous one. */
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const server = await startWorkerdServer(PORT, KEY, {}, INSPECTOR_PORT);
const api = apiClient(server.url, KEY).ok;

/** Where a request's time goes, by the functions that do each step (names as bundled). */
const STEPS: [string, string[]][] = [
  ["outbox flush to D1 (alarm)", ["flushOutbox", "writeAuditBatch"]],
  [
    "AgentDO lease calls (acquire, confirm, release)",
    ["acquire", "confirm", "settleOnce", "leaseForNewSession", "releaseBySession"],
  ],
  ["schema of a new object", ["ensure", "applyMigrations"]],
  ["registry read (isolate cache, D1 once a second)", ["agentDirectory", "tenantHead", "readHead", "directoryAt"]],
  ["SessionDO commit (one transaction)", ["commitStep", "commit"]],
  ["SessionDO flow (validation, context, timers, triggers)", ["start", "startHandoff", "create", "arm", "alarm"]],
  ["Worker: HTTP, auth, body validation, response", ["dispatch", "apiKeyAuth", "readJson", "settle"]],
];

const OTHER = "other: the runtime, RPC plumbing, idle, GC";

/** The step a node's stack belongs to: the first step (in STEPS' order) any frame of it names. */
function classifier(nodes: ProfileNode[]): (id: number) => string {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const memo = new Map<number, string>();
  return (id) => {
    let step = memo.get(id);
    if (step !== undefined) return step;
    const names = new Set<string>();
    for (let at = byId.get(id); at; at = byId.get(parent.get(at.id) ?? -1)) names.add(at.callFrame.functionName);
    step = STEPS.find(([, fns]) => fns.some((f) => names.has(f)))?.[0] ?? (names.has("(idle)") ? "(idle)" : OTHER);
    memo.set(id, step);
    return step;
  };
}

const WAITING = "waiting: the isolate idle (storage commit, sockets)";

/**
 * One handoff's profile as consecutive steps with their µs, from Relay's first frame (the
 * Worker taking the request) to its last (the response): the profiler's own start and stop
 * fall outside. Idle samples in between are the handoff waiting.
 */
function timeline(profile: Profile): [string, number][] {
  const stepOf = classifier(profile.nodes);
  const segments: [string, number][] = [];
  profile.samples.forEach((id, i) => {
    // A sample's time is the gap to the next one (the last sample counts as one interval).
    const us = profile.timeDeltas[i + 1] ?? TRACE_INTERVAL_US;
    const step = stepOf(id) === "(idle)" ? WAITING : stepOf(id);
    const last = segments.at(-1);
    if (last && last[0] === step) last[1] += us;
    else segments.push([step, us]);
  });
  const relay = (segment: [string, number]) => segment[0] !== OTHER && segment[0] !== WAITING;
  const first = segments.findIndex(relay);
  const last = segments.findLastIndex(relay);
  return first < 0 ? [] : segments.slice(first, last + 1);
}

const TRACE_INTERVAL_US = 50;
const TRACES = 100;

const label = (node: ProfileNode) =>
  `${node.callFrame.functionName || "(anonymous)"}${node.callFrame.url ? `:${node.callFrame.lineNumber + 1}` : ""}`;

function report(nodes: ProfileNode[]): void {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const up = (n: ProfileNode) => byId.get(parent.get(n.id) ?? -1);
  const total = nodes.reduce((sum, n) => sum + n.hitCount, 0);
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const sqlBy = new Map<string, number>();
  for (const n of nodes) {
    if (n.hitCount === 0) continue;
    self.set(label(n), (self.get(label(n)) ?? 0) + n.hitCount);
    const seen = new Set<string>();
    for (let at: ProfileNode | undefined = n; at; at = up(at)) {
      if (seen.has(label(at))) continue;
      seen.add(label(at));
      inclusive.set(label(at), (inclusive.get(label(at)) ?? 0) + n.hitCount);
    }
    // SQLite's own time (the native `exec`), charged to the first named method above the sql helper.
    if (n.callFrame.functionName === "exec" && n.callFrame.url === "") {
      let caller = up(n);
      while (
        caller &&
        (caller.callFrame.functionName === "" ||
          caller.callFrame.functionName === "exec" ||
          caller.callFrame.functionName === "tag")
      )
        caller = up(caller);
      const name = caller ? label(caller) : "(unknown)";
      sqlBy.set(name, (sqlBy.get(name) ?? 0) + n.hitCount);
    }
  }
  // Each sample charged to the first step (in this order) any frame of its stack belongs to.
  const stepOf = classifier(nodes);
  const stepHits = new Map<string, number>(STEPS.map(([name]) => [name, 0]));
  for (const n of nodes) {
    if (n.hitCount === 0) continue;
    const step = stepOf(n.id) === "(idle)" ? OTHER : stepOf(n.id);
    stepHits.set(step, (stepHits.get(step) ?? 0) + n.hitCount);
  }
  const top = (map: Map<string, number>, count: number) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([name, hits]) => `| ${name} | ${((hits / total) * 100).toFixed(1)}% |`)
      .join("\n");
  console.log(
    `\nCPU profile of ${HANDOFFS} ${KIND === "sessions" ? "session creations" : `handoffs${CAPACITY ? ` to an agent with a limit of ${CAPACITY}` : ""}`} on workerd, ${total} samples (function:line in the bundle wrangler deploys)`,
  );
  console.log(`\n| step | share of samples |\n| --- | --- |\n${top(stepHits, STEPS.length + 1)}`);
  console.log(`\n| self | share |\n| --- | --- |\n${top(self, 15)}`);
  console.log(`\n| inclusive | share |\n| --- | --- |\n${top(inclusive, Number(process.env.PROFILE_TOP ?? 30))}`);
  console.log(
    `\n| SQLite time, by the method that ran the statement | share of all samples |\n| --- | --- |\n${top(sqlBy, 15)}`,
  );
}

/**
 * TRACES handoffs one at a time (after a warm-up), each under its own profile sampled every
 * TRACE_INTERVAL_US: where one handoff's time goes, step by step, in the isolate that runs
 * the Worker and its objects, including the time it sat idle waiting (storage, sockets).
 * A step is often shorter than the interval, so the figure is the mean over the traces.
 */
async function traces(devtools: Awaited<ReturnType<typeof inspector>>, session: string): Promise<void> {
  const hop = (i: number) =>
    api(
      "POST",
      "/v1/handoffs",
      i % 2 === 0
        ? { session_id: session, source_agent: "profile-a", target_agent: "profile-b", reason: "trace" }
        : { session_id: session, source_agent: "profile-b", mode: "return", reason: "trace" },
    );
  for (let i = 0; i < 20; i++) await hop(i);
  // The warm-up's flush to D1 (due half a second after its records) is over by then.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  await devtools.send("Profiler.setSamplingInterval", { interval: TRACE_INTERVAL_US });
  const runs: [string, number][][] = [];
  for (let i = 0; i < TRACES; i++) {
    await devtools.send("Profiler.start");
    await hop(i);
    runs.push(timeline(((await devtools.send("Profiler.stop")) as { profile: Profile }).profile));
  }
  const steps = [...STEPS.map(([name]) => name), OTHER, WAITING];
  const total = new Map<string, number>(steps.map((step) => [step, 0]));
  for (const run of runs) for (const [step, us] of run) total.set(step, total.get(step)! + us);
  const all = [...total.values()].reduce((sum, us) => sum + us, 0);
  console.log(
    `\nOne handoff${CAPACITY ? ` to an agent with a limit of ${CAPACITY}` : ""} at a time on workerd, ${TRACES} traced, each under its own profile sampled every ${TRACE_INTERVAL_US} µs, from the Worker's first frame to its last`,
  );
  console.log("| step | mean µs per handoff | share |\n| --- | --- | --- |");
  for (const [step, us] of [...total].sort((x, y) => y[1] - x[1]))
    if (us > 0) console.log(`| ${step} | ${(us / TRACES).toFixed(0)} | ${((us / all) * 100).toFixed(1)}% |`);
  console.log(`| all | ${(all / TRACES).toFixed(0)} | 100% |`);
}

/** HANDOFFS handoffs (or session creations) 16 in flight under one profile sampled every 100 µs, then its report. */
async function sampled(devtools: Awaited<ReturnType<typeof inspector>>, ids: string[]): Promise<void> {
  await devtools.send("Profiler.setSamplingInterval", { interval: 100 });
  await devtools.send("Profiler.start");
  const hops = new Array<number>(ids.length).fill(0);
  if (KIND === "sessions") await runConcurrent(HANDOFFS, 16, () => api("POST", "/v1/sessions", { agent: "profile-a" }));
  else
    await runConcurrent(HANDOFFS, 16, async (i) => {
      const k = i % ids.length;
      hops[k] = (hops[k] ?? 0) + 1;
      const back = hops[k] % 2 === 0;
      await api(
        "POST",
        "/v1/handoffs",
        back
          ? { session_id: ids[k], source_agent: "profile-b", mode: "return", reason: "profile" }
          : { session_id: ids[k], source_agent: "profile-a", target_agent: "profile-b", reason: "profile" },
      );
    });
  const { profile } = (await devtools.send("Profiler.stop")) as { profile: { nodes: ProfileNode[] } };
  report(profile.nodes);
}

try {
  await api("PUT", "/v1/agents/profile-a", {
    name: "profile-a",
    description: "No capacity limit.",
    handoffs: ["profile-b"],
  });
  await api("PUT", "/v1/agents/profile-b", {
    name: "profile-b",
    description: CAPACITY ? `At most ${CAPACITY} sessions.` : "No capacity limit.",
    ...(CAPACITY ? { max_concurrent_sessions: CAPACITY } : {}),
  });
  // A trace follows one session; the sampled profile spreads its handoffs over SESSIONS.
  const ids: string[] = [];
  for (let i = 0; i < (KIND === "trace" ? 1 : SESSIONS); i++)
    ids.push((await api("POST", "/v1/sessions", { agent: "profile-a" })).id);
  const devtools = await inspector(INSPECTOR_PORT);
  await devtools.send("Profiler.enable");
  if (KIND === "trace") await traces(devtools, ids[0]!);
  else await sampled(devtools, ids);
  devtools.close();
} finally {
  await server.stop();
}
