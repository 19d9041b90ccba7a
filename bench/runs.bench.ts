/**
 * Runs on workerd through Miniflare's API, then through `wrangler dev` on loopback
 * (docs/benchmarks.md, Runs; BENCH_RUNTIME=workerd or wrangler for one): what Relay itself adds to
 * a run, per model call and per handoff, against a fake OpenAI-compatible model on loopback
 * that answers in 0 ms, beside `GET /health` under the same load.
 *
 *   npx tsx bench/runs.bench.ts
 *   BENCH_PERSIST_TO=/dev/shm/relay-bench-runs npx tsx bench/runs.bench.ts   (local state on tmpfs)
 *
 * Three kinds of run, each one user message on a fresh session, RUNS of each, CONCURRENCY
 * in flight:
 *   chain  a → b → c: 3 model calls, 2 handoffs (the run its target judges);
 *   tools  one agent calling an ordinary tool twice, then answering: 3 model calls, 0 handoffs;
 *   solo   one agent answering at once: 1 model call.
 * A model call's cost is (tools − solo) / 2 and a handoff's is (chain − tools) / 2, at p50
 * and at p99: the same requests, sessions and load, so what differs is the calls and the
 * handoffs alone. A model call's cost includes the loopback round trip to the fake (about
 * one /health exchange); a handoff's is all Relay's (validation, the switch, its audit).
 * The fake checks every request it gets against the protocol (tools offered, every tool
 * call answered) and the bench fails if a run is not what it should be.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiClient } from "./lib/api-client";
import { chatCompletion, type FakeMessage } from "./lib/chat-completion";
import { spawnRole } from "./lib/child-role";
import { startWorkerdServer } from "./lib/workerd-server";
import { devKey, percentile, runConcurrent, startDevServer } from "./lib/wrangler-dev";

const WORKERD_KEY = "bench-runs-key";
const RUNS = 300;
const WARMUP = 30;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const PORT = 8796;
const MODEL_PORT = 8797;
const RUNTIMES = (process.env.BENCH_RUNTIME ?? "workerd,wrangler").split(",");

interface WireMessage {
  role: string;
  content: string | null;
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}
interface WireRequest {
  model: string;
  messages: WireMessage[];
  tools?: { type: string; function: { name: string } }[];
  tool_choice?: string;
}

const protocolErrors: string[] = [];
/** How long Relay waited for a model answer, by its own clock (the llm_call events' duration_ms), per run. */
const modelWaits: number[] = [];
let modelCalls = 0;

/** OpenAI's rule: each assistant tool call answered by a tool message right after it, no orphan outputs. */
function checkProtocol(body: WireRequest): void {
  const open = new Set<string>();
  for (const m of body.messages) {
    if (m.role === "tool") {
      if (!open.delete(m.tool_call_id ?? "")) protocolErrors.push(`orphan tool output ${m.tool_call_id}`);
      continue;
    }
    if (open.size > 0) protocolErrors.push(`unanswered tool calls before a ${m.role} message`);
    open.clear();
    for (const call of m.tool_calls ?? []) open.add(call.id);
  }
  if (open.size > 0) protocolErrors.push("unanswered tool calls at the end");
}

/** The scripted model: what each agent does, from its system prompt and what it has already done. */
function reply(body: WireRequest): FakeMessage {
  const agent = /^You are '([^']+)'/.exec(body.messages[0]?.content ?? "")?.[1] ?? "?";
  const offered = new Set((body.tools ?? []).map((t) => t.function.name));
  const call = (name: string, args: Record<string, unknown>) => {
    if (!name.startsWith("lookup") && !offered.has(name)) protocolErrors.push(`${agent} was not offered ${name}`);
    return {
      content: null,
      tool_calls: [
        { id: `call_${modelCalls}`, type: "function" as const, function: { name, arguments: JSON.stringify(args) } },
      ],
    };
  };
  const toolOutputs = body.messages.filter((m) => m.role === "tool").length;
  switch (agent) {
    case "bench-a":
      return call("transfer_to_bench_b", { reason: "b knows" });
    case "bench-b":
      return call("transfer_to_bench_c", { reason: "c knows" });
    case "bench-tools":
      return toolOutputs < 2 ? call("lookup", { n: toolOutputs }) : { content: "done" };
    default:
      return { content: "done" };
  }
}

function fakeModel(req: IncomingMessage, res: ServerResponse): void {
  let text = "";
  req.on("data", (chunk) => (text += chunk));
  req.on("end", () => {
    modelCalls++;
    const body = JSON.parse(text) as WireRequest;
    checkProtocol(body);
    const message = reply(body);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(chatCompletion(modelCalls, body.model, message));
  });
}

/**
 * The fake model runs in a process of its own (this file, BENCH_ROLE=model), so the client's load does
 * not delay its answers.
 */
async function startModel(): Promise<{ stats(): Promise<{ calls: number; errors: string[] }>; stop(): void }> {
  const child = await spawnRole(import.meta.filename, "model");
  return {
    stats: async () =>
      (await (await fetch(`http://127.0.0.1:${MODEL_PORT}/stats`)).json()) as { calls: number; errors: string[] },
    stop: () => child.kill(),
  };
}

if (process.env.BENCH_ROLE === "model") {
  createServer((req, res) => {
    if (req.url === "/stats") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ calls: modelCalls, errors: [...new Set(protocolErrors)] }));
      return;
    }
    fakeModel(req, res);
  }).listen(MODEL_PORT, "127.0.0.1", () => console.log("listening"));
} else {
  await main();
}

async function main(): Promise<void> {
  const model = await startModel();
  try {
    for (const runtime of RUNTIMES) await bench(runtime, model);
  } finally {
    model.stop();
  }
}

async function bench(runtime: string, model: Awaited<ReturnType<typeof startModel>>): Promise<void> {
  const vars = { OPENAI_BASE_URL: `http://127.0.0.1:${MODEL_PORT}/v1`, OPENAI_API_KEY: "sk-bench" };
  // wrangler dev's local state; workerd through Miniflare keeps it in memory.
  const persist =
    runtime === "workerd"
      ? undefined
      : (process.env.BENCH_PERSIST_TO ?? mkdtempSync(join(tmpdir(), "relay-bench-runs-")));
  const server =
    runtime === "workerd"
      ? await startWorkerdServer(PORT + 10, WORKERD_KEY, vars)
      : await startDevServer(PORT, persist, vars);
  // After the dev server's set-up, which writes .dev.vars on a fresh clone.
  const key = runtime === "workerd" ? WORKERD_KEY : devKey();
  const api = apiClient(`${server.url}/v1`, key).call;

  interface Kind {
    name: string;
    agent: string;
    calls: number;
    handoffs: number;
  }
  const KINDS: Kind[] = [
    { name: "chain", agent: "bench-a", calls: 3, handoffs: 2 },
    { name: "tools", agent: "bench-tools", calls: 3, handoffs: 0 },
    { name: "solo", agent: "bench-solo", calls: 1, handoffs: 0 },
  ];

  /** Times `count` runs of `kind` (only the message request; the session is made first). */
  async function measure(kind: Kind, count: number, own: number[] = []): Promise<number[]> {
    const sessions: string[] = [];
    for (let i = 0; i < count; i++) {
      const created = await api("POST", "/sessions", { agent: kind.agent, ttl_s: 600 });
      if (created.status !== 201) throw new Error(`session: ${JSON.stringify(created.json)}`);
      sessions.push(created.json.id);
    }
    const before = (await model.stats()).calls;
    const ms = await runConcurrent(count, CONCURRENCY, async (i) => {
      const res = await api("POST", `/sessions/${sessions[i]}/messages`, { role: "user", content: "hello" });
      const run = res.json?.run;
      const handoffs = (run?.events ?? []).filter((e: { event_type: string }) => e.event_type === "handoff").length;
      let waited = 0;
      for (const e of run?.events ?? []) if (e.event_type === "llm_call") waited += e.duration_ms;
      modelWaits.push(waited / kind.calls);
      own.push(Date.parse(run.ended_at) - Date.parse(run.started_at) - waited);
      if (res.status !== 200 || run.status !== "completed" || run.turns !== kind.calls || handoffs !== kind.handoffs) {
        throw new Error(
          `${kind.name} run not as scripted: ${res.status} ${JSON.stringify(run ?? res.json).slice(0, 600)}`,
        );
      }
    });
    const after = (await model.stats()).calls;
    if (after - before !== count * kind.calls)
      throw new Error(`${kind.name}: ${after - before} model calls for ${count} runs`);
    return ms;
  }

  const fmt = (ms: number) => `${ms.toFixed(2)} ms`;
  const ratio = (a: number, b: number) => `${(a / b).toFixed(1)}×`;

  try {
    for (const agent of [
      { name: "bench-a", description: "First", handoffs: ["bench-b"] },
      { name: "bench-b", description: "Second", handoffs: ["bench-c"] },
      { name: "bench-c", description: "Third" },
      { name: "bench-tools", description: "Calls a tool twice" },
      { name: "bench-solo", description: "Answers at once" },
    ]) {
      const res = await api("PUT", `/agents/${agent.name}`, agent);
      if (res.status >= 300) throw new Error(`PUT ${agent.name}: ${JSON.stringify(res.json)}`);
    }
    const config = await api("PUT", "/config/routing", { llm: { provider: "openai", model: "fake-0ms" } });
    if (config.status !== 200) throw new Error(`config: ${JSON.stringify(config.json)}`);

    const health = async () => {
      await (await fetch(`${server.url}/health`)).text();
    };
    await runConcurrent(200, CONCURRENCY, health);
    for (const kind of KINDS) await measure(kind, WARMUP);

    const healthMs = await runConcurrent(RUNS * 3, CONCURRENCY, health);
    modelWaits.length = 0;
    const results = new Map<string, number[]>();
    const owns = new Map<string, number[]>();
    for (const kind of KINDS) {
      const own: number[] = [];
      results.set(kind.name, await measure(kind, RUNS, own));
      owns.set(kind.name, own);
    }
    const { errors } = await model.stats();
    if (errors.length > 0) throw new Error(`the fake model saw protocol errors:\n${errors.join("\n")}`);

    const at = (name: string, p: number) => percentile(results.get(name)!, p);
    const ownAt = (name: string, p: number) => percentile(owns.get(name)!, p);
    const h50 = percentile(healthMs, 50);
    const h99 = percentile(healthMs, 99);
    const perCall = (p: number) => Math.max(0, (ownAt("tools", p) - ownAt("solo", p)) / 2);
    const perHandoff = (p: number) => Math.max(0, (ownAt("chain", p) - ownAt("tools", p)) / 2);

    const where = runtime === "workerd" ? "on workerd via Miniflare's API (no proxy)" : "via wrangler dev on loopback";
    console.log(
      `\nRuns ${where}, fake model in its own process answering in 0 ms: ${RUNS} runs of each kind, ${CONCURRENCY} in flight`,
    );
    console.log("| measure | p50 | p99 | p50 vs GET /health |\n| --- | --- | --- | --- |");
    console.log(`| baseline: GET /health, same load (client) | ${fmt(h50)} | ${fmt(h99)} | 1.0× |`);
    for (const kind of KINDS) {
      console.log(
        `| run: ${kind.name}, ${kind.calls} model calls, ${kind.handoffs} handoffs (client) | ${fmt(at(kind.name, 50))} | ${fmt(at(kind.name, 99))} | ${ratio(at(kind.name, 50), h50)} |`,
      );
    }
    console.log(
      `| a model call's wait for the fake, loopback HTTP (Relay's clock) | ${fmt(percentile(modelWaits, 50))} | ${fmt(percentile(modelWaits, 99))} | ${ratio(percentile(modelWaits, 50), h50)} |`,
    );
    for (const kind of KINDS) {
      console.log(
        `| Relay's own time in a ${kind.name} run: its duration minus the model waits | ${fmt(ownAt(kind.name, 50))} | ${fmt(ownAt(kind.name, 99))} | ${ratio(ownAt(kind.name, 50), h50)} |`,
      );
    }
    // A difference of medians is a fair estimate; a difference of tails is not one (p99 left out).
    console.log(
      `| server-side overhead per model call: (tools − solo) / 2 | ${fmt(perCall(50))} | - | ${ratio(perCall(50), h50)} |`,
    );
    console.log(
      `| server-side overhead per handoff: (chain − tools) / 2 | ${fmt(perHandoff(50))} | - | ${ratio(perHandoff(50), h50)} |`,
    );
    console.log(`| workerd RSS | ${server.workerdRssMiB()} MiB | | |`);
    const overhead = ownAt("chain", 50) / h50;
    console.log(`\n| target, same run | measured | verdict |\n| --- | --- | --- |`);
    console.log(
      `| a run of 3 model calls and 2 handoffs: server overhead p50 ≤ 5× /health's | ${overhead.toFixed(1)}× | ${overhead <= 5 ? "met" : "MISSED"} |`,
    );
  } finally {
    await server.stop();
    if (persist && !process.env.BENCH_PERSIST_TO) rmSync(persist, { recursive: true, force: true });
  }
}
