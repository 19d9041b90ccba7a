/**
 * What A2A costs beside Relay's own API (docs/a2a.md): the same run — one user message, one
 * model call, a final answer — asked for as an A2A `SendMessage` (JSON-RPC at /a2a/<agent>,
 * the message's contextId an existing session) and as `POST /v1/sessions/:id/messages`, on
 * `wrangler dev` on loopback against a fake OpenAI-compatible model that answers at once.
 * Each on fresh sessions made beforehand (not timed), RUNS of each, CONCURRENCY in flight, in
 * alternating blocks so drift hits both alike. Prints p50 and p90 of each and their ratio.
 *
 *   npx tsx bench/a2a.bench.ts
 */

import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chatCompletion } from "./lib/chat-completion";
import { devKey, percentile, runConcurrent, startDevServer } from "./lib/wrangler-dev";

const RUNS = Number(process.env.BENCH_RUNS ?? 200);
const WARMUP = 20;
const BLOCKS = 2;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const PORT = 8886;
const MODEL_PORT = 8887;
const AGENT = "bench-a2a";

/** An OpenAI-compatible model that answers every request at once, whole. */
function startModel(): Promise<Server> {
  let calls = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      calls++;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(chatCompletion(calls, "fake", { content: "done" }));
    });
  });
  return new Promise((resolve) => server.listen(MODEL_PORT, "127.0.0.1", () => resolve(server)));
}

async function main(): Promise<void> {
  const model = await startModel();
  const persist = mkdtempSync(join(tmpdir(), "relay-bench-a2a-"));
  const server = await startDevServer(PORT, persist, {
    OPENAI_BASE_URL: `http://127.0.0.1:${MODEL_PORT}/v1`,
    OPENAI_API_KEY: "sk-bench",
  });
  try {
    const key = devKey();
    const call = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", ...headers },
        body: JSON.stringify(body),
      });
      return { status: res.status, json: (await res.json()) as any };
    };
    const put = await fetch(`${server.url}/v1/agents/${AGENT}`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: AGENT, description: "Answers at once" }),
    });
    if (put.status >= 300) throw new Error(`agent: ${await put.text()}`);
    await fetch(`${server.url}/v1/config/routing`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ llm: { provider: "openai", model: "fake" } }),
    });

    const sessions = async (count: number) => {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) ids.push((await call("/v1/sessions", { agent: AGENT, ttl_s: 600 })).json.id);
      return ids;
    };
    const rest = async (ids: string[]) =>
      runConcurrent(ids.length, CONCURRENCY, async (i) => {
        const res = await call(`/v1/sessions/${ids[i]}/messages`, { role: "user", content: "hello" });
        if (res.status !== 200 || res.json.run.status !== "completed") throw new Error(JSON.stringify(res.json));
      });
    const a2a = async (ids: string[]) =>
      runConcurrent(ids.length, CONCURRENCY, async (i) => {
        const res = await call(
          `/a2a/${AGENT}`,
          {
            jsonrpc: "2.0",
            id: i,
            method: "SendMessage",
            params: {
              message: {
                messageId: `m-${i}-${Math.random()}`,
                role: "ROLE_USER",
                contextId: ids[i],
                parts: [{ text: "hello" }],
              },
              configuration: { historyLength: 0 },
            },
          },
          { "A2A-Version": "1.0" },
        );
        if (res.json.result?.task?.status?.state !== "TASK_STATE_COMPLETED") throw new Error(JSON.stringify(res.json));
      });

    await rest(await sessions(WARMUP));
    await a2a(await sessions(WARMUP));
    const restMs: number[] = [];
    const a2aMs: number[] = [];
    const block = Math.ceil(RUNS / BLOCKS);
    for (let b = 0; b < BLOCKS; b++) {
      restMs.push(...(await rest(await sessions(block))));
      a2aMs.push(...(await a2a(await sessions(block))));
    }
    const row = (name: string, ms: number[]) =>
      `${name.padEnd(36)} p50 ${percentile(ms, 50).toFixed(1).padStart(6)} ms   p90 ${percentile(ms, 90).toFixed(1).padStart(6)} ms`;
    console.log(
      `\nA2A SendMessage beside POST /v1/sessions/:id/messages — ${restMs.length} runs each, ${CONCURRENCY} in flight, wrangler dev`,
    );
    console.log(row("POST /v1/sessions/:id/messages", restMs));
    console.log(row("A2A SendMessage (JSON-RPC)", a2aMs));
    console.log(
      `ratio SendMessage / messages: p50 ${(percentile(a2aMs, 50) / percentile(restMs, 50)).toFixed(2)}×, p90 ${(percentile(a2aMs, 90) / percentile(restMs, 90)).toFixed(2)}×`,
    );
  } finally {
    await server.stop();
    model.close();
    rmSync(persist, { recursive: true, force: true });
  }
}

await main();
