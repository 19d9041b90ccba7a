/**
 * Time to first delta (docs/benchmarks.md, Streaming): a run on Relay (workerd through
 * Miniflare's API) whose model is a fake OpenAI-compatible server on loopback that streams
 * its answer in chunks, read by a client over Server-Sent Events. What the client waits for
 * its first `message.delta`, beside what the fake itself took to its first chunk, in the same
 * run; Relay's added latency is the difference, and is shown as a ratio to `GET /health`
 * under the same load (one request at a time: this is latency, not throughput).
 *
 *   npx tsx bench/stream.bench.ts
 *
 * The fake runs in a process of its own and stamps, per request, when it received it and
 * when it sent its first text chunk (the same machine's clock as the client's):
 *   client wait   = first delta at the client − request sent
 *   model's own   = first chunk sent − request received by the model
 *   Relay's added = client wait − model's own (Relay's work before the model call, and
 *                   between the model's chunk and the client)
 * and the two halves of Relay's added latency, each against the floor's:
 *   to the model  = request received by the model − request sent
 *   to the client = first delta at the client − first chunk sent
 */

import { createServer } from "node:http";
import { apiClient } from "./lib/api-client";
import { startBaselineObjects } from "./lib/baseline-object";
import { spawnRole } from "./lib/child-role";
import { startWorkerdServer } from "./lib/workerd-server";
import { percentile } from "./lib/wrangler-dev";

const KEY = "bench-stream-key";
const RUNS = Number(process.env.BENCH_RUNS ?? 200);
const WARMUP = 20;
const PORT = 8806;
const MODEL_PORT = 8807;
const FLOOR_PORT = 8808;
/** The floor's live objects, taken in turn (each a live object after its first call). */
const FLOOR_OBJECTS = 8;
/** The fake's gap between its text chunks, and how many it sends. */
const PIECE_GAP_MS = 5;
const PIECES = 12;
const clock = () => performance.timeOrigin + performance.now();

interface Stamp {
  received: number;
  firstChunk: number;
}

if (process.env.BENCH_ROLE === "model") {
  const stamps: Stamp[] = [];
  createServer((req, res) => {
    if (req.url === "/stamps") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(stamps.splice(0)));
      return;
    }
    const received = clock();
    let text = "";
    req.on("data", (chunk) => (text += chunk));
    req.on("end", async () => {
      const body = JSON.parse(text) as { model: string; stream?: boolean };
      if (!body.stream) {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "this fake only streams" } }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
        `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      res.write(chunk({ role: "assistant", content: "" }));
      res.write(chunk({ content: "Piece 0. " }));
      stamps.push({ received, firstChunk: clock() });
      for (let i = 1; i < PIECES; i++) {
        await new Promise((r) => setTimeout(r, PIECE_GAP_MS));
        res.write(chunk({ content: `Piece ${i}. ` }));
      }
      res.write(chunk({}, "stop"));
      res.end("data: [DONE]\n\n");
    });
  }).listen(MODEL_PORT, "127.0.0.1", () => console.log("listening"));
} else {
  await main();
}

/** Reads a streamed answer to its end: its text, and when `first` was first in it (0: never). */
async function readStream(response: Response, first: string): Promise<{ text: string; firstDelta: number }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let firstDelta = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (firstDelta === 0 && text.includes(first)) firstDelta = clock();
  }
  return { text, firstDelta };
}

async function startModel() {
  const child = await spawnRole(import.meta.filename, "model");
  return {
    stamps: async () => (await (await fetch(`http://127.0.0.1:${MODEL_PORT}/stamps`)).json()) as Stamp[],
    stop: () => child.kill(),
  };
}

async function main(): Promise<void> {
  const model = await startModel();
  const server = await startWorkerdServer(PORT, KEY, {
    OPENAI_BASE_URL: `http://127.0.0.1:${MODEL_PORT}/v1`,
    OPENAI_API_KEY: "sk-bench",
  });
  const plain = await startBaselineObjects(FLOOR_PORT);
  const api = apiClient(`${server.url}/v1`, KEY).call;
  try {
    const agent = await api("PUT", "/agents/bench-streamer", { name: "bench-streamer", description: "Streams" });
    if (agent.status >= 300) throw new Error(`agent: ${JSON.stringify(agent.json)}`);
    const config = await api("PUT", "/config/routing", { llm: { provider: "openai", model: "fake-stream" } });
    if (config.status !== 200) throw new Error(`config: ${JSON.stringify(config.json)}`);

    /** One streamed run: when the request went out, and when its first delta came back. */
    async function run(): Promise<{ sent: number; firstDelta: number }> {
      const created = await api("POST", "/sessions", { agent: "bench-streamer", ttl_s: 600 });
      if (created.status !== 201) throw new Error(`session: ${JSON.stringify(created.json)}`);
      const sent = clock();
      const response = await fetch(`${server.url}/v1/sessions/${created.json.id}/messages`, {
        method: "POST",
        headers: { Authorization: `Bearer ${KEY}`, "Content-Type": "application/json", Accept: "text/event-stream" },
        body: JSON.stringify({ role: "user", content: "stream please" }),
      });
      const { text, firstDelta } = await readStream(response, "event: message.delta");
      if (firstDelta === 0 || !text.includes('"status":"completed"'))
        throw new Error(`the run did not stream to its end: ${text.slice(-400)}`);
      return { sent, firstDelta };
    }

    /**
     * The platform's floor of the same path: one write in a live object, then the model called
     * from it and its stream passed back (bench/lib/baseline-object.ts, `/streamed`).
     */
    async function floorRun(i: number): Promise<{ sent: number; firstDelta: number }> {
      const to = `http://127.0.0.1:${MODEL_PORT}/v1/chat/completions`;
      const sent = clock();
      const response = await fetch(`${plain.url}/streamed/floor-${i % FLOOR_OBJECTS}?to=${encodeURIComponent(to)}`, {
        method: "POST",
        body: JSON.stringify({
          model: "fake-stream",
          stream: true,
          messages: [{ role: "user", content: "stream please" }],
        }),
      });
      const { text, firstDelta } = await readStream(response, "Piece 0.");
      if (firstDelta === 0 || !text.includes("[DONE]"))
        throw new Error(`the floor did not stream: ${text.slice(-400)}`);
      return { sent, firstDelta };
    }

    for (let i = 0; i < WARMUP; i++) {
      await run();
      await floorRun(i);
    }
    await model.stamps();
    const health: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const started = clock();
      await (await fetch(`${server.url}/health`)).text();
      health.push(clock() - started);
    }
    const client: number[] = [];
    const runs: { sent: number; firstDelta: number }[] = [];
    const floorRuns: { sent: number; firstDelta: number }[] = [];
    // Relay's runs and the floor's in turns, so both meet the same moments of a shared machine.
    for (let i = 0; i < RUNS; i++) {
      runs.push(await run());
      floorRuns.push(await floorRun(i));
    }
    const stamps = await model.stamps();
    if (stamps.length !== 2 * RUNS) throw new Error(`the model saw ${stamps.length} requests for ${2 * RUNS} runs`);
    const own: number[] = [];
    const added: number[] = [];
    const floorClient: number[] = [];
    const floorAdded: number[] = [];
    // The halves of the added latency: before the model has the request, after its first chunk.
    const toModel: number[] = [];
    const toClient: number[] = [];
    const floorToModel: number[] = [];
    const floorToClient: number[] = [];
    for (const [i, r] of runs.entries()) {
      const wait = r.firstDelta - r.sent;
      const modelOwn = stamps[2 * i]!.firstChunk - stamps[2 * i]!.received;
      client.push(wait);
      own.push(modelOwn);
      added.push(wait - modelOwn);
      const floor = floorRuns[i]!;
      const floorStamp = stamps[2 * i + 1]!;
      floorClient.push(floor.firstDelta - floor.sent);
      floorAdded.push(floor.firstDelta - floor.sent - (floorStamp.firstChunk - floorStamp.received));
      toModel.push(stamps[2 * i]!.received - r.sent);
      toClient.push(r.firstDelta - stamps[2 * i]!.firstChunk);
      floorToModel.push(floorStamp.received - floor.sent);
      floorToClient.push(floor.firstDelta - floorStamp.firstChunk);
    }
    const row = (name: string, values: number[]) =>
      `| ${name} | ${percentile(values, 50).toFixed(2)} ms | ${percentile(values, 99).toFixed(2)} ms |`;
    const h50 = percentile(health, 50);
    console.log(
      `\nStreaming on workerd (in memory), ${RUNS} runs one at a time, ${new Date().toISOString().slice(0, 10)}\n`,
    );
    console.log("| measure | p50 | p99 |\n| --- | --- | --- |");
    console.log(row("client: request → first `message.delta`", client));
    console.log(row("fake model: request received → first chunk sent", own));
    console.log(row("Relay's added latency (the difference)", added));
    console.log(row("`GET /health`, same load", health));
    console.log(row("floor: request → first chunk", floorClient));
    console.log(row("floor's added latency (one write, the model called from the object)", floorAdded));
    console.log(row("Relay: request sent → the fake model has it", toModel));
    console.log(row("Relay: the fake's first chunk → first `message.delta` at the client", toClient));
    console.log(row("floor: request sent → the fake model has it", floorToModel));
    console.log(row("floor: the fake's first chunk → the client", floorToClient));
    const relayTimes = percentile(added, 50) / h50;
    const floorTimes = percentile(floorAdded, 50) / h50;
    console.log(
      `\n| target, same run | measured | verdict |\n| --- | --- | --- |\n| Relay's added latency to the first delta ≤ 2× /health at p50 | ${relayTimes.toFixed(1)}× (p99 ${(percentile(added, 99) / percentile(health, 99)).toFixed(1)}×) | ${relayTimes <= 2 ? "met" : floorTimes > 2 ? "below the platform's floor (next row)" : "MISSED"} |\n| (the floor's added latency) | ${floorTimes.toFixed(1)}× /health at p50 | — |\n| Relay beside the floor, p50 | ${(percentile(added, 50) / percentile(floorAdded, 50)).toFixed(1)}× | — |`,
    );
  } finally {
    await server.stop();
    await plain.stop();
    model.stop();
  }
}
