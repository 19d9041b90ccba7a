/**
 * What a long conversation costs: sessions whose history holds 0, 100 and 1,000 items
 * (400 characters each) are handed over once, so the agent holds a context carrying that
 * history; then 200 messages are added one at a time, then 20 handoffs made there and
 * back. Each is measured as workerd's CPU per request (its flushes to D1 included) and a
 * p50 at the client, beside the empty conversation and `GET /health` in the same run.
 * On workerd through Miniflare's API, state in memory, one request in flight.
 *
 *   npx tsx bench/long-session.bench.ts
 */
import { apiClient } from "./lib/api-client";
import { flushesSettled, startWorkerdServer } from "./lib/workerd-server";
import { percentile } from "./lib/wrangler-dev";

const PORT = 8798;
const KEY = "bench-long-session-key";
const LENGTHS = [0, 100, 1000];
const PASSES = 2;
const MESSAGES = 200;
const HANDOFFS = 20;
const CONTENT = "a long conversation ".repeat(20);

const server = await startWorkerdServer(PORT, KEY);
const api = apiClient(server.url, KEY).ok;

/** Runs `calls` one at a time: p50 ms at the client, workerd CPU µs per call (the flushes after them included). */
async function measure(calls: number, call: (i: number) => Promise<unknown>): Promise<{ p50: number; cpuUs: number }> {
  await flushesSettled();
  const cpu = server.workerdCpuMs();
  const ms: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    await call(i);
    ms.push(performance.now() - t0);
  }
  await flushesSettled();
  return { p50: percentile(ms, 50), cpuUs: ((server.workerdCpuMs() - cpu) / calls) * 1000 };
}

interface Row {
  length: number;
  message: { p50: number; cpuUs: number }[];
  handoff: { p50: number; cpuUs: number }[];
}

try {
  for (let i = 0; i < 200; i++) await fetch(`${server.url}/health`).then((r) => r.text());
  const health = await measure(MESSAGES, () => fetch(`${server.url}/health`).then((r) => r.text()));
  const rows: Row[] = LENGTHS.map((length) => ({ length, message: [], handoff: [] }));
  for (let pass = 0; pass < PASSES; pass++) {
    for (const row of rows) {
      const session = await api("POST", "/v1/sessions", { agent: "triage" });
      for (let i = 0; i < row.length; i++)
        await api("POST", `/v1/sessions/${session.id}/messages`, {
          role: i % 2 ? "assistant" : "user",
          content: CONTENT,
          run: false,
        });
      const handed = await api("POST", "/v1/handoffs", {
        session_id: session.id,
        source_agent: "triage",
        target_agent: "billing",
        reason: "long session",
      });
      if (handed.context.conversation_history.length !== row.length)
        throw new Error(`context carries ${handed.context.conversation_history.length} items, not ${row.length}`);
      row.message.push(
        await measure(MESSAGES, () =>
          api("POST", `/v1/sessions/${session.id}/messages`, {
            role: "user",
            content: "and one more thing",
            run: false,
          }),
        ),
      );
      row.handoff.push(
        await measure(HANDOFFS, (i) =>
          api(
            "POST",
            "/v1/handoffs",
            i % 2 === 0
              ? { session_id: session.id, source_agent: "billing", mode: "return", reason: "back" }
              : { session_id: session.id, source_agent: "triage", target_agent: "billing", reason: "again" },
          ),
        ),
      );
      await api("DELETE", `/v1/sessions/${session.id}`);
    }
  }

  const mean = (xs: { p50: number; cpuUs: number }[]) => ({
    p50: xs.reduce((a, x) => a + x.p50, 0) / xs.length,
    cpuUs: xs.reduce((a, x) => a + x.cpuUs, 0) / xs.length,
  });
  const empty = rows[0]!;
  const [emptyMessage, emptyHandoff] = [mean(empty.message), mean(empty.handoff)];
  console.log(
    `\nA long conversation on workerd via Miniflare's API (state in memory), 1 in flight, mean of ${PASSES} passes`,
  );
  console.log(`GET /health: p50 ${health.p50.toFixed(2)} ms, ${health.cpuUs.toFixed(0)} µs of workerd CPU per request`);
  console.log(
    "| history items | message p50 ms | message CPU µs | vs empty | vs /health | handoff p50 ms | handoff CPU µs | vs empty | vs /health |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const row of rows) {
    const [message, handoff] = [mean(row.message), mean(row.handoff)];
    console.log(
      `| ${row.length.toLocaleString("en")} | ${message.p50.toFixed(2)} | ${message.cpuUs.toFixed(0)} | ${(message.cpuUs / emptyMessage.cpuUs).toFixed(2)}× | ${(message.cpuUs / health.cpuUs).toFixed(1)}× | ` +
        `${handoff.p50.toFixed(2)} | ${handoff.cpuUs.toFixed(0)} | ${(handoff.cpuUs / emptyHandoff.cpuUs).toFixed(2)}× | ${(handoff.cpuUs / health.cpuUs).toFixed(1)}× |`,
    );
  }
} finally {
  await server.stop();
}
