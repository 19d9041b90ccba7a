import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { AuditRecord } from "../../src/audit/record";
import { hourOf } from "../../src/quotas/windows";
import { tenantRpc } from "../../src/rpc/stubs";
import { recordBytes } from "../../src/usage/flushed";
import { eventually } from "../eventually";
import { answer, callTool } from "../fakes/openai";
import { shardOf } from "../shards";
import { call } from "./helpers";
import { script } from "./run-fixtures";

/**
 * `GET /v1/usage` (docs/api.md, Usage): after a scripted conversation, every count is what the
 * conversation did — requests, the session, its runs, the handoff, the tool call, each model
 * call with its tokens, and the D1 rows and bytes its audit trail wrote. Storage is this file's
 * own, so alpha's usage starts here at zero.
 */

/** Alpha's counts this hour and the last, read from its object (a read that is no request of alpha's). */
async function counted(): Promise<Record<string, number>> {
  const hour = hourOf(Date.now());
  const read = await tenantRpc(env, "alpha").usage("alpha", hour - 1, hour + 1);
  if (!read.ok) throw new Error(read.error.message);
  const sum: Record<string, number> = {};
  for (const h of read.value.hours)
    for (const [name, n] of Object.entries(h.usage.counts)) sum[name] = (sum[name] ?? 0) + n;
  return sum;
}

/** Alpha's audit records as D1 holds them. */
async function d1Records(): Promise<AuditRecord[]> {
  const { results } = await (await shardOf("alpha"))
    .prepare("SELECT * FROM audit_log WHERE tenant = 'alpha' ORDER BY id")
    .all<AuditRecord & { details: string }>();
  return results.map((row) => ({ ...row, details: JSON.parse(row.details) }));
}

describe("usage of a scripted conversation", () => {
  it("counts exactly what the conversation did", async () => {
    let requests = 0;
    const api = async (method: string, path: string, body?: unknown) => {
      requests++;
      const res = await call(method, path, body);
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.json)}`);
      return res.json;
    };
    script({
      front: [callTool("transfer_to_back")],
      back: [answer("Sorted."), callTool("pick_date", {}), answer("Booked for the 3rd.")],
    });
    await api("PUT", "/v1/tools/pick_date", { name: "pick_date", kind: "client", description: "Asks for a date" });
    await api("PUT", "/v1/agents/front", { name: "front", description: "Front desk", handoffs: ["back"] });
    await api("PUT", "/v1/agents/back", { name: "back", description: "Back office", tools: { allow: ["pick_date"] } });
    await api("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
    const session = (await api("POST", "/v1/sessions", { agent: "front" })).id;
    // Run 1: front hands over to back (a handoff tool is a handoff, not a tool call); back answers.
    expect((await api("POST", `/v1/sessions/${session}/messages`, { role: "user", content: "help" })).run.status).toBe(
      "completed",
    );
    // Run 2: back asks the client for a date (one tool call), then answers.
    const paused = await api("POST", `/v1/sessions/${session}/messages`, { role: "user", content: "book me in" });
    expect(paused.run.status).toBe("requires_action");
    const outputs = paused.run.pending.tool_calls.map((c: { id: string }) => ({ tool_call_id: c.id, output: "3rd" }));
    expect((await api("POST", `/v1/sessions/${session}/tool-outputs`, { outputs })).run.status).toBe("completed");

    // Every audit record reaches D1; what the flushes wrote is counted from the same records.
    // D1 is read once nothing is pending: read beside the pending count, it could be read
    // before the last flush and the count after it.
    await eventually(
      async () => (await api("GET", `/v1/sessions/${session}/audit`)).pending,
      (pending) => pending === 0,
      { what: "the session's audit in D1" },
    );
    const d1 = await d1Records();
    const bytes = d1.reduce((n, r) => n + recordBytes(r), 0);
    const expected = {
      requests,
      sessions: 1,
      runs: 2,
      handoffs: 1,
      tool_calls: 1,
      model_calls: 4,
      input_tokens: 4 * 42,
      output_tokens: 4 * 7,
      d1_bytes_written: bytes,
    };
    const counts = await eventually(
      counted,
      (c) => Object.entries(expected).every(([name, n]) => c[name] === n) && (c.d1_rows_written ?? 0) > 0,
      { what: `alpha's usage to equal the conversation, ${JSON.stringify(expected)}` },
    );
    expect(d1.filter((r) => r.action === "handoff.completed")).toHaveLength(1);
    // D1 says what the flushes wrote: each audit row is one row of audit_log and more of its indexes.
    expect(counts.d1_rows_written).toBeGreaterThan(d1.length);

    const report = await call("GET", "/v1/usage?granularity=hour");
    expect(report.status).toBe(200);
    const { requests: reported, ...totals } = report.json.totals;
    // The report's own request is counted too, once its isolate hands it over.
    expect([requests, requests + 1]).toContain(reported);
    expect(totals).toEqual({
      sessions: 1,
      runs: 2,
      handoffs: 1,
      tool_calls: 1,
      model_calls: 4,
      input_tokens: 168,
      output_tokens: 28,
      d1_rows_written: counts.d1_rows_written,
      d1_bytes_written: bytes,
      refused: {},
      models: [{ provider: "openai", model: "fake-model", calls: 4, input_tokens: 168, output_tokens: 28 }],
    });
    expect(report.json.d1_bytes_stored_estimate).toBe(bytes);
    expect(report.json.quotas).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ limit: "sessions_per_day", used: 1, window: "day", source: "default" }),
        expect.objectContaining({ limit: "model_tokens_per_day", used: 196, value: 1_000_000_000 }),
        expect.objectContaining({ limit: "agents", used: 2, window: null, resets_at: null }),
        expect.objectContaining({ limit: "tools", used: 1 }),
        expect.objectContaining({ limit: "requests_per_minute", used: null, value: 1_000_000 }),
      ]),
    );
  });
});

describe("GET /v1/usage", () => {
  it("answers every bucket of the period, by UTC day by default: the last 30 days", async () => {
    const report = await call("GET", "/v1/usage");
    expect(report.json.granularity).toBe("day");
    expect(report.json.buckets).toHaveLength(30);
    const today = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000).toISOString();
    expect(report.json.buckets.at(-1).start).toBe(today);
    expect(report.json.buckets[0].requests).toBe(0);
  });

  it("takes a period and refuses one it cannot answer", async () => {
    const ok = await call("GET", "/v1/usage?from=2026-01-01T10:30:00Z&to=2026-01-01T13:00:00Z&granularity=hour");
    expect(ok.json.buckets.map((b: { start: string }) => b.start)).toEqual([
      "2026-01-01T10:00:00.000Z",
      "2026-01-01T11:00:00.000Z",
      "2026-01-01T12:00:00.000Z",
    ]);
    for (const query of [
      "from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z",
      "from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z",
      "from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z&granularity=hour",
      "granularity=week",
      "from=yesterday",
    ]) {
      const refused = await call("GET", `/v1/usage?${query}`);
      expect(refused.status, query).toBe(400);
      expect(refused.json.error.code, query).toBe("VALIDATION_FAILED");
    }
  });

  it("is each tenant's own", async () => {
    const beta = await call("GET", "/v1/usage", undefined, { key: "beta-test-key" });
    expect(beta.json.tenant).toBe("beta");
    expect(beta.json.totals.sessions).toBe(0);
  });
});
