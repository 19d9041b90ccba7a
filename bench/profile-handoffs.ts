/**
 * Where a handoff's CPU goes: Relay on workerd (Miniflare's API), 1,000 handoffs between two
 * agents without a capacity limit, 16 in flight, under the V8 sampling profiler of workerd's
 * inspector. Prints the share of samples per step (registry read, commit, AgentDO calls,
 * outbox flush, the Worker's own part), per function (self and inclusive), and the SQL time
 * by the method that ran the statement. On one isolate, throughput is the inverse of the
 * CPU a request costs, so this is the map for making handoffs cheaper (issue 13).
 *
 *   npx tsx bench/profile-handoffs.ts
 *   PROFILE_CAPACITY=500 npx tsx bench/profile-handoffs.ts   (the target has a limit: leases)
 *   PROFILE_KIND=sessions npx tsx bench/profile-handoffs.ts   (session creation)
 */
import { startWorkerdServer } from "./lib/workerd-server";
import { inspector } from "./lib/inspector";
import { runConcurrent } from "./lib/wrangler-dev";

const PORT = 8798;
const INSPECTOR_PORT = 9232;
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

const server = await startWorkerdServer(PORT, KEY, {}, INSPECTOR_PORT);
const headers = { Authorization: `Bearer ${KEY}`, "Content-Type": "application/json" };
async function api(method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${server.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await response.json().catch(() => null);
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json).slice(0, 300)}`);
  return json;
}

/** Where a request's time goes, by the functions that do each step (names as bundled). */
const STEPS: [string, string[]][] = [
  ["outbox flush to D1 (alarm)", ["flushOutbox", "writeAuditBatch"]],
  ["AgentDO lease calls (acquire, confirm, release)", ["acquire", "confirm", "settleOnce", "leaseForNewSession", "releaseBySession"]],
  ["schema of a new object", ["migrate"]],
  ["registry read (isolate cache, D1 once a second)", ["agentDirectory", "tenantHead", "readHead", "directoryAt"]],
  ["SessionDO commit (one transaction)", ["commitStep", "commit"]],
  ["SessionDO flow (validation, context, timers, triggers)", ["start", "startHandoff", "create", "arm", "alarm"]],
  ["Worker: HTTP, auth, body validation, response", ["dispatch", "apiKeyAuth", "readJson"]],
];

const label = (node: ProfileNode) => `${node.callFrame.functionName || "(anonymous)"}${node.callFrame.url ? `:${node.callFrame.lineNumber + 1}` : ""}`;

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
      while (caller && (caller.callFrame.functionName === "" || caller.callFrame.functionName === "exec" || caller.callFrame.functionName === "tag")) caller = up(caller);
      const name = caller ? label(caller) : "(unknown)";
      sqlBy.set(name, (sqlBy.get(name) ?? 0) + n.hitCount);
    }
  }
  // Each sample charged to the first step (in this order) any frame of its stack belongs to.
  const stepHits = new Map<string, number>(STEPS.map(([name]) => [name, 0]));
  for (const n of nodes) {
    if (n.hitCount === 0) continue;
    const names = new Set<string>();
    for (let at: ProfileNode | undefined = n; at; at = up(at)) names.add(at.callFrame.functionName);
    const step = STEPS.find(([, fns]) => fns.some((f) => names.has(f)))?.[0] ?? "other: the runtime, RPC plumbing, idle, GC";
    stepHits.set(step, (stepHits.get(step) ?? 0) + n.hitCount);
  }
  const top = (map: Map<string, number>, count: number) =>
    [...map].sort((a, b) => b[1] - a[1]).slice(0, count).map(([name, hits]) => `| ${name} | ${((hits / total) * 100).toFixed(1)}% |`).join("\n");
  console.log(`\nCPU profile of ${HANDOFFS} ${KIND === "sessions" ? "session creations" : `handoffs${CAPACITY ? ` to an agent with a limit of ${CAPACITY}` : ""}`} on workerd, ${total} samples (function:line in the bundle wrangler deploys)`);
  console.log(`\n| step | share of samples |\n| --- | --- |\n${top(stepHits, STEPS.length + 1)}`);
  console.log(`\n| self | share |\n| --- | --- |\n${top(self, 15)}`);
  console.log(`\n| inclusive | share |\n| --- | --- |\n${top(inclusive, Number(process.env.PROFILE_TOP ?? 30))}`);
  console.log(`\n| SQLite time, by the method that ran the statement | share of all samples |\n| --- | --- |\n${top(sqlBy, 15)}`);
}

try {
  await api("PUT", "/v1/agents/profile-a", { name: "profile-a", description: "No capacity limit.", handoffs: ["profile-b"] });
  await api("PUT", "/v1/agents/profile-b", { name: "profile-b", description: CAPACITY ? `At most ${CAPACITY} sessions.` : "No capacity limit.", ...(CAPACITY ? { max_concurrent_sessions: CAPACITY } : {}) });
  const ids: string[] = [];
  for (let i = 0; i < SESSIONS; i++) ids.push((await api("POST", "/v1/sessions", { agent: "profile-a" })).id);
  const devtools = await inspector(INSPECTOR_PORT);
  await devtools.send("Profiler.enable");
  await devtools.send("Profiler.setSamplingInterval", { interval: 100 });
  await devtools.send("Profiler.start");
  const hops = new Array<number>(SESSIONS).fill(0);
  if (KIND === "sessions") await runConcurrent(HANDOFFS, 16, () => api("POST", "/v1/sessions", { agent: "profile-a" }));
  else await runConcurrent(HANDOFFS, 16, async (i) => {
    const k = i % SESSIONS;
    const back = (hops[k] = (hops[k] ?? 0) + 1) % 2 === 0;
    await api(
      "POST",
      "/v1/handoffs",
      back ? { session_id: ids[k], source_agent: "profile-b", mode: "return", reason: "profile" } : { session_id: ids[k], source_agent: "profile-a", target_agent: "profile-b", reason: "profile" },
    );
  });
  const { profile } = (await devtools.send("Profiler.stop")) as { profile: { nodes: ProfileNode[] } };
  devtools.close();
  report(profile.nodes);
} finally {
  await server.stop();
}
