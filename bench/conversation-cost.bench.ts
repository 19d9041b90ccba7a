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
 * Prices: PRICES in bench/lib/cost-report.ts (Workers Paid, published prices; the date is
 * printed) applied past each included monthly allowance — the cost of one more million
 * conversations.
 *
 * D1 bytes a conversation: the growth of each D1 database's size over the conversations
 * and what they left, divided by CONVERSATIONS. The size is D1's own figure, `meta.size_after`
 * of a query (the database file: whole 4 KB pages, free pages included), read through the
 * metered Worker when the meter is reset and when it is read.
 */

import { spawn } from "node:child_process";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import { apiClient } from "./lib/api-client";
import { chatCompletion, type FakeMessage } from "./lib/chat-completion";
import { type Meter, printHandoff, report } from "./lib/cost-report";
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
    const before = await meter();
    const cpu0 = server.workerdCpuMs();
    const models0 = await model.stats();
    const started = performance.now();
    for (let i = 0; i < CONVERSATIONS; i++) await conversation(api);
    const playedMs = performance.now() - started;
    await quiet();
    const played = await meter();
    const cpuMs = (server.workerdCpuMs() - cpu0) / CONVERSATIONS;
    const models = await model.stats();
    const p = {
      conversations: CONVERSATIONS,
      modelMs: MODEL_MS,
      handoffSessions: HANDOFF_SESSIONS,
      handoffs: HANDOFFS,
    };
    report(p, before, played, cpuMs, playedMs / CONVERSATIONS, {
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
    printHandoff("no capacity limit", none, some, p);
    // The same handoffs to an agent with a capacity limit: a lease taken, confirmed and released in its AgentDO.
    await api.ok("PUT", "/v1/agents/cost-billing", { ...BILLING, max_concurrent_sessions: 1_000 });
    const leased = await handoffRows(HANDOFFS);
    printHandoff("cost-billing limited to 1,000 sessions: a lease each", none, leased, p);
  } finally {
    await server.stop();
  }
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

// The fake model is this file run again as a process of its own.
if (process.env.BENCH_ROLE === "model") {
  createServer(serveModel).listen(MODEL_PORT, "127.0.0.1", () => console.log("listening"));
} else {
  await main();
}
