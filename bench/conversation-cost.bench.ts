/**
 * What one conversation costs to run on Cloudflare (docs/benchmarks.md, The cost of a conversation): Relay on workerd through
 * Miniflare's API, state in memory, its Worker and objects metered by a bench-only wrapper
 * (bench/lib/metered-worker.ts), a fake OpenAI-compatible model and tool endpoint in a
 * process of their own.
 *
 *   npx tsx bench/conversation-cost.bench.ts
 *   BENCH_MODEL_MS=1500 npx tsx bench/conversation-cost.bench.ts   (a model that takes 1.5 s an answer)
 *
 * One conversation, played CONVERSATIONS times one after another: a session created from
 * an input the router places (no agent named), five user messages that each run an agent
 * — the second hands the session to billing, the third calls a tool that needs a person's
 * approval (approved through the inbox), the fifth hands it back — and the session ended
 * with DELETE. Then every flush, purge and alarm they left is waited out, and the counts
 * are divided by CONVERSATIONS. Apart, HANDOFF_SESSIONS sessions of HANDOFFS API handoffs
 * beside as many with none: the rows one handoff writes in D1 and in the objects, by table;
 * then the same handoffs to an agent with a capacity limit (a lease each).
 *
 * Prices: PRICES below (Workers Paid, published prices; the date is printed) applied past
 * each included monthly allowance — the cost of one more million conversations.
 */

import { spawn } from "node:child_process";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import { apiClient } from "./lib/api-client";
import { chatCompletion, type FakeMessage } from "./lib/chat-completion";
import { startWorkerdServer } from "./lib/workerd-server";

const KEY = "bench-cost-key";
/** The conversations' own tenant, so the router sees only the bench's two agents (not the demo team). */
const TENANT_KEY = "bench-cost-tenant-key";
const PORT = Number(process.env.BENCH_PORT ?? 8789) + 1;
const MODEL_PORT = Number(process.env.BENCH_MODEL_PORT ?? 8788);
const MODEL_MS = Number(process.env.BENCH_MODEL_MS ?? 0);
const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS ?? 20);
const HANDOFF_SESSIONS = 10;
const HANDOFFS = 10;
const root = join(import.meta.dirname, "..");

/** Workers Paid, as published on developers.cloudflare.com (Workers, Durable Objects, D1 pricing pages). */
const PRICES = {
  read: "2026-11-26",
  workerRequests: { perMillion: 0.3, note: "10 M a month included" },
  workerCpuMs: { perMillion: 0.02, note: "30 M CPU-ms a month included" },
  doRequests: { perMillion: 0.15, note: "1 M a month included; RPC calls, alarms, HTTP requests" },
  doGbSeconds: { perMillion: 12.5, note: "400,000 GB-s a month included; 128 MB an object" },
  rowsRead: { perMillion: 0.001, note: "25 billion a month included (Durable Object SQLite and D1 alike)" },
  rowsWritten: {
    perMillion: 1.0,
    note: "50 M a month included (Durable Object SQLite and D1 alike); a setAlarm is one",
  },
};

// ── The fake model and tool endpoint (a process of its own: BENCH_ROLE=model) ──

interface WireMessage {
  role: string;
  content: string | null;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
}

let modelCalls = 0;
let toolCalls = 0;

/** What each agent answers, from its system prompt and the conversation since the last user message. */
function reply(messages: WireMessage[]): FakeMessage {
  const agent = /^You are '([^']+)'/.exec(messages[0]?.content ?? "")?.[1] ?? "?";
  const lastUser = messages.findLastIndex((m) => m.role === "user");
  const said = (messages[lastUser]?.content ?? "").toLowerCase();
  const since = messages.slice(lastUser + 1);
  const call = (name: string, args: Record<string, unknown>): FakeMessage => ({
    content: null,
    tool_calls: [{ id: `call_${modelCalls}`, type: "function", function: { name, arguments: JSON.stringify(args) } }],
  });
  const toolAnswered = since.some((m) => m.role === "tool");
  if (agent === "cost-front") {
    if (said.includes("refund") && !toolAnswered) return call("transfer_to_cost_billing", { reason: "a refund" });
    return { content: "Front desk here. How can I help?" };
  }
  if (agent === "cost-billing") {
    if (said.includes("back")) return call("return_to_cost_front", { reason: "done with billing" });
    if (said.includes("order") && !toolAnswered) return call("refund", { order_id: "42", amount: 40 });
    if (toolAnswered) return { content: "Refunded 40 on order 42." };
    return { content: "Billing here. What should I look at?" };
  }
  return { content: "?" };
}

function serveModel(req: IncomingMessage, res: ServerResponse): void {
  let text = "";
  req.on("data", (chunk) => (text += chunk));
  req.on("end", () => {
    if (req.url === "/stats") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ modelCalls, toolCalls }));
      return;
    }
    if (req.url === "/tools/refund") {
      toolCalls++;
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("refunded");
      return;
    }
    modelCalls++;
    const body = JSON.parse(text) as { model: string; messages: WireMessage[] };
    const message = reply(body.messages);
    setTimeout(() => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(chatCompletion(modelCalls, body.model, message));
    }, MODEL_MS);
  });
}

async function startModel(): Promise<{ stats(): Promise<{ modelCalls: number; toolCalls: number }>; stop(): void }> {
  const child = spawn(join(root, "node_modules", ".bin", "tsx"), [import.meta.filename], {
    env: { ...process.env, BENCH_ROLE: "model" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`the fake model exited (${code})`)));
  });
  return {
    stats: async () => (await (await fetch(`http://127.0.0.1:${MODEL_PORT}/stats`)).json()) as never,
    stop: () => child.kill(),
  };
}

// ── The bench ─────────────────────────────────────────────────────────────────

interface Meter {
  workerRequests: number;
  doRequests: Record<string, number>;
  alarms: Record<string, number>;
  doActiveMs: Record<string, number>;
  objects: Record<string, number>;
  sqlRowsRead: number;
  sqlRowsWritten: number;
  sqlRowsWrittenByTable: Record<string, number>;
  setAlarms: number;
  d1Queries: number;
  d1RowsRead: number;
  d1RowsWritten: number;
  d1RowsWrittenByTable: Record<string, number>;
  subrequests: Record<string, number>;
}

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

async function main(): Promise<void> {
  const model = await startModel();
  try {
    await measure(model);
  } finally {
    model.stop();
  }
}

async function measure(model: Awaited<ReturnType<typeof startModel>>): Promise<void> {
  const server = await startWorkerdServer(
    PORT,
    KEY,
    {
      OPENAI_BASE_URL: `http://127.0.0.1:${MODEL_PORT}/v1`,
      OPENAI_API_KEY: "sk-bench",
      RELAY_API_KEYS: `dev:${KEY},cost:${TENANT_KEY}`,
      // The tool endpoint is on loopback, which a deployed Relay refuses (docs/security.md).
      RELAY_ALLOW_LOCAL_ENDPOINTS: "true",
    },
    undefined,
    undefined,
    undefined,
    true,
    "bench/lib/metered-worker.ts",
  );
  const api = apiClient(server.url, TENANT_KEY);
  const meter = async (): Promise<Meter> => (await fetch(`${server.url}/__meter`)).json() as Promise<Meter>;
  const reset = () => fetch(`${server.url}/__meter/reset`).then((r) => r.text());
  /** Waits until no alarm, flush or purge has run for a while (the flush window is half a second). */
  const quiet = async () => {
    let last = "";
    for (let i = 0; i < 120; i++) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const m = await meter();
      const now = JSON.stringify([m.alarms, m.d1Queries, m.sqlRowsWritten]);
      if (now === last) return;
      last = now;
    }
    throw new Error("the objects never went quiet");
  };
  try {
    await setUp(api);
    // Warm: the isolate, the registry cache, the router's compiled registry.
    await conversation(api);
    await quiet();

    await reset();
    const cpu0 = server.workerdCpuMs();
    const models0 = await model.stats();
    const started = performance.now();
    for (let i = 0; i < CONVERSATIONS; i++) await conversation(api);
    const playedMs = performance.now() - started;
    await quiet();
    const played = await meter();
    const cpuMs = (server.workerdCpuMs() - cpu0) / CONVERSATIONS;
    const models = await model.stats();
    report(played, cpuMs, playedMs / CONVERSATIONS, {
      modelCalls: (models.modelCalls - models0.modelCalls) / CONVERSATIONS,
      toolCalls: (models.toolCalls - models0.toolCalls) / CONVERSATIONS,
    });

    // The D1 rows of one handoff: sessions with HANDOFFS handoffs beside sessions with none.
    const handoffRows = async (handoffs: number) => {
      await reset();
      for (let s = 0; s < HANDOFF_SESSIONS; s++) {
        const { id } = await api.ok("POST", "/v1/sessions", { agent: "cost-front" });
        for (let h = 0; h < handoffs; h++)
          await api.ok(
            "POST",
            "/v1/handoffs",
            h % 2 === 0
              ? { session_id: id, source_agent: "cost-front", target_agent: "cost-billing", reason: "bench" }
              : { session_id: id, source_agent: "cost-billing", mode: "return", reason: "bench" },
          );
      }
      await quiet();
      return meter();
    };
    const none = await handoffRows(0);
    const some = await handoffRows(HANDOFFS);
    printHandoff("no capacity limit", none, some);
    // The same handoffs to an agent with a capacity limit: a lease taken, confirmed and released in its AgentDO.
    await api.ok("PUT", "/v1/agents/cost-billing", { ...BILLING, max_concurrent_sessions: 1_000 });
    const leased = await handoffRows(HANDOFFS);
    printHandoff("cost-billing limited to 1,000 sessions: a lease each", none, leased);
  } finally {
    await server.stop();
  }
}

/** What one handoff writes and reads: `some`'s counts less `none`'s, per handoff. */
function printHandoff(what: string, none: Meter, some: Meter): void {
  const per = (f: (m: Meter) => number) => (f(some) - f(none)) / (HANDOFF_SESSIONS * HANDOFFS);
  const keys = (f: (m: Meter) => Record<string, number>) =>
    [...new Set([...Object.keys(f(some)), ...Object.keys(f(none))])].sort();
  console.log(
    `\nOne immediate API handoff (${what}), from ${HANDOFF_SESSIONS} sessions × ${HANDOFFS} handoffs beside ${HANDOFF_SESSIONS} sessions with none`,
  );
  console.log("| per handoff | count |\n| --- | --- |");
  console.log(`| D1 rows written | ${per((m) => m.d1RowsWritten).toFixed(1)} |`);
  for (const table of keys((m) => m.d1RowsWrittenByTable))
    console.log(`| … of which \`${table}\` | ${per((m) => m.d1RowsWrittenByTable[table] ?? 0).toFixed(1)} |`);
  console.log(`| D1 rows read | ${per((m) => m.d1RowsRead).toFixed(1)} |`);
  console.log(`| D1 queries | ${per((m) => m.d1Queries).toFixed(2)} |`);
  console.log(
    `| Durable Object SQLite rows written (a setAlarm counted as one) | ${per((m) => m.sqlRowsWritten + m.setAlarms).toFixed(1)} |`,
  );
  for (const table of keys((m) => m.sqlRowsWrittenByTable))
    console.log(`| … of which \`${table}\` | ${per((m) => m.sqlRowsWrittenByTable[table] ?? 0).toFixed(1)} |`);
  console.log(`| Durable Object SQLite rows read | ${per((m) => m.sqlRowsRead).toFixed(1)} |`);
  console.log(
    `| Durable Object requests (the handoff's RPC, lease calls, its share of flush alarms) | ${per((m) => sum(m.doRequests) + sum(m.alarms)).toFixed(2)} |`,
  );
}

/** The bench's billing agent, as set up (a capacity limit is added for the leased handoffs). */
const BILLING = {
  name: "cost-billing",
  description: "Charges and refunds for the cost bench.",
  tools: { allow: ["refund"], confirmation: { require: ["refund"] } },
};

async function setUp(api: ReturnType<typeof apiClient>): Promise<void> {
  await api.ok("PUT", "/v1/tools/refund", {
    name: "refund",
    kind: "http",
    description: "Refunds an order",
    url: `http://127.0.0.1:${MODEL_PORT}/tools/refund`,
    signing: "none",
    parameters: { type: "object", properties: { order_id: { type: "string" }, amount: { type: "number" } } },
  });
  await api.ok("PUT", "/v1/agents/cost-billing", BILLING);
  await api.ok("PUT", "/v1/agents/cost-front", {
    name: "cost-front",
    description: "The cost bench's front desk.",
    triggers: { priority: 90, keywords: ["account", "question"], examples: ["I have a question about my account"] },
    handoffs: ["cost-billing"],
  });
  await api.ok("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake" } });
}

/** One conversation; throws when any step is not what it should be. */
async function conversation(api: ReturnType<typeof apiClient>): Promise<void> {
  const created = await api.ok("POST", "/v1/sessions", { input: "Hello, I have a question about my account" });
  if (created.current_agent !== "cost-front" || !created.route)
    throw new Error(`not routed to cost-front: ${JSON.stringify(created).slice(0, 300)}`);
  const id = created.id as string;
  const say = async (content: string, expect: { status: string; agent?: string }) => {
    const { run } = await api.ok("POST", `/v1/sessions/${id}/messages`, { role: "user", content });
    if (run.status !== expect.status || (expect.agent && run.output_agent !== expect.agent))
      throw new Error(`'${content}': ${JSON.stringify(run).slice(0, 400)}`);
    return run;
  };
  await say("hello", { status: "completed", agent: "cost-front" });
  await say("I need a refund", { status: "completed", agent: "cost-billing" });
  const paused = await say("refund order 42 please", { status: "awaiting_approval" });
  const approved = await api.ok("POST", `/v1/inbox/${paused.pending.approvals[0].inbox_id}/resolve`, {
    decision: "approve",
    by: "bench",
  });
  if (approved.run.status !== "completed") throw new Error(`approval: ${JSON.stringify(approved.run).slice(0, 400)}`);
  await say("thanks, that is all for billing", { status: "completed", agent: "cost-billing" });
  await say("take me back please", { status: "completed", agent: "cost-front" });
  const ended = await api.call("DELETE", `/v1/sessions/${id}`);
  if (ended.status !== 204) throw new Error(`delete: ${ended.status}`);
}

function report(m: Meter, cpuMs: number, wallMs: number, outside: { modelCalls: number; toolCalls: number }): void {
  const n = CONVERSATIONS;
  const doRequests = (sum(m.doRequests) + sum(m.alarms)) / n;
  const activeS = sum(m.doActiveMs) / 1000 / n;
  const gbS = activeS * 0.125;
  const sqlWritten = (m.sqlRowsWritten + m.setAlarms) / n;
  const rows: [string, string, number][] = [
    ["Worker requests", (m.workerRequests / n).toFixed(1), (m.workerRequests / n) * PRICES.workerRequests.perMillion],
    [
      "workerd CPU, all of it (Worker, objects, local D1): an upper bound of the Worker's billed CPU",
      `${cpuMs.toFixed(0)} ms`,
      cpuMs * PRICES.workerCpuMs.perMillion,
    ],
    [
      `Durable Object requests (${Object.entries(m.doRequests)
        .map(([k, v]) => `${k} ${(v / n).toFixed(1)}`)
        .join(", ")}; alarms ${(sum(m.alarms) / n).toFixed(1)})`,
      doRequests.toFixed(1),
      doRequests * PRICES.doRequests.perMillion,
    ],
    [
      `Durable Object wall time while running (${Object.entries(m.doActiveMs)
        .map(([k, v]) => `${k} ${(v / n).toFixed(0)} ms`)
        .join(", ")}), at 128 MB`,
      `${(activeS * 1000).toFixed(0)} ms = ${gbS.toFixed(4)} GB-s`,
      gbS * PRICES.doGbSeconds.perMillion,
    ],
    [
      `SQLite rows written in the objects (${(m.setAlarms / n).toFixed(0)} setAlarm, ${Object.entries(
        m.sqlRowsWrittenByTable,
      )
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${(v / n).toFixed(0)}`)
        .join(", ")})`,
      sqlWritten.toFixed(0),
      sqlWritten * PRICES.rowsWritten.perMillion,
    ],
    [
      "SQLite rows read in the objects",
      (m.sqlRowsRead / n).toFixed(0),
      (m.sqlRowsRead / n) * PRICES.rowsRead.perMillion,
    ],
    [
      `D1 rows written (${Object.entries(m.d1RowsWrittenByTable)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${(v / n).toFixed(0)}`)
        .join(", ")})`,
      (m.d1RowsWritten / n).toFixed(0),
      (m.d1RowsWritten / n) * PRICES.rowsWritten.perMillion,
    ],
    ["D1 rows read", (m.d1RowsRead / n).toFixed(0), (m.d1RowsRead / n) * PRICES.rowsRead.perMillion],
  ];
  console.log(
    `\nOne conversation (created with routing, 5 messages with runs, 2 handoffs, 1 approval, ended), mean of ${n}; the model answering in ${MODEL_MS} ms; prices read ${PRICES.read}, beyond the included usage`,
  );
  console.log("| what Cloudflare bills | per conversation | a million conversations |\n| --- | --- | --- |");
  for (const [what, count, dollars] of rows) console.log(`| ${what} | ${count} | $${dollars.toFixed(2)} |`);
  const total = rows.reduce((a, r) => a + r[2], 0);
  console.log(`| **total** | | **$${total.toFixed(2)}** |`);
  console.log(`\n| not billed by Cloudflare, counted | per conversation |\n| --- | --- |`);
  console.log(
    `| subrequests (fetch) | ${Object.entries(m.subrequests)
      .map(([k, v]) => `${k} ${(v / n).toFixed(1)}`)
      .join(", ")} |`,
  );
  console.log(`| model calls / tool calls the fakes answered | ${outside.modelCalls} / ${outside.toolCalls} |`);
  console.log(`| D1 queries | ${(m.d1Queries / n).toFixed(1)} |`);
  console.log(
    `| objects that ran | ${Object.entries(m.objects)
      .map(([k, v]) => `${k} ${(v / n).toFixed(1)}`)
      .join(", ")} |`,
  );
  console.log(`| the conversation's wall time at the client, one at a time | ${wallMs.toFixed(0)} ms |`);
}

// The fake model is this file run again as a process of its own.
if (process.env.BENCH_ROLE === "model") {
  createServer(serveModel).listen(MODEL_PORT, "127.0.0.1", () => console.log("listening"));
} else {
  await main();
}
