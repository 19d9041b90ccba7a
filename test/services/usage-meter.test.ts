import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { writeAuditBatch } from "../../src/audit/d1-store";
import { auditEvent } from "../../src/audit/events";
import { OpenAIProvider } from "../../src/providers";
import { hourOf } from "../../src/quotas/windows";
import { tenantRpc } from "../../src/rpc/stubs";
import { meteredAuditDb, meteredProvider } from "../../src/services/usage-meter";
import { recordBytes } from "../../src/usage/flushed";
import { eventually } from "../eventually";
import { answer, fakeOpenAI } from "../fakes/openai";
import { llmServer } from "../fakes/server";

/**
 * The isolate's usage meter (src/services/usage-meter.ts): model calls through a metered
 * provider and audit flushes through a metered D1 reach the tenant's object, counted, within
 * about a second and with no D1 write of their own. Each test has a tenant of its own.
 */

/** The tenant's counts of this hour and the last, summed. */
async function counts(tenant: string) {
  const hour = hourOf(Date.now());
  const read = await tenantRpc(env, tenant).usage(tenant, hour - 1, hour + 1);
  if (!read.ok) throw new Error(read.error.message);
  const sum: Record<string, number> = {};
  const models: Record<string, unknown> = {};
  for (const h of read.value.hours) {
    for (const [name, n] of Object.entries(h.usage.counts)) sum[name] = (sum[name] ?? 0) + n;
    Object.assign(models, h.usage.models);
  }
  return { sum, models };
}

describe("meteredProvider", () => {
  it("counts each model call with the tokens the provider reported, by provider and model", async () => {
    const fake = fakeOpenAI({ baseUrl: "https://llm.test/v1", respond: () => answer("hi") });
    llmServer.use(fake.handler);
    const provider = meteredProvider(
      env,
      "meter-a",
      new OpenAIProvider({ apiKey: "sk-test-key", baseUrl: "https://llm.test/v1" }),
    );
    const req = {
      model: "gpt-fake",
      messages: [{ role: "user" as const, content: "x" }],
      tools: [],
      tool_choice: "auto" as const,
    };
    await provider.complete(req, AbortSignal.timeout(5_000));
    await provider.stream!(req, AbortSignal.timeout(5_000), () => undefined);
    const usage = await eventually(
      () => counts("meter-a"),
      (u) => u.sum.model_calls === 2,
      { what: "two model calls counted" },
    );
    expect(usage.sum).toEqual({ model_calls: 2, input_tokens: 84, output_tokens: 14 });
    expect(usage.models).toEqual({ "openai\u0000gpt-fake": { calls: 2, input_tokens: 84, output_tokens: 14 } });
  });

  it("counts a failed call, without tokens", async () => {
    const provider = meteredProvider(
      env,
      "meter-b",
      new OpenAIProvider({ apiKey: "sk-test-key", baseUrl: "https://llm.test/v1" }),
    );
    llmServer.use(
      fakeOpenAI({ baseUrl: "https://llm.test/v1", respond: () => ({ kind: "http", status: 500 }) }).handler,
    );
    const req = {
      model: "gpt-fake",
      messages: [{ role: "user" as const, content: "x" }],
      tools: [],
      tool_choice: "auto" as const,
    };
    await expect(provider.complete(req, AbortSignal.timeout(5_000))).rejects.toThrow();
    const usage = await eventually(
      () => counts("meter-b"),
      (u) => u.sum.model_calls === 1,
      { what: "the failed call counted" },
    );
    expect(usage.sum).toEqual({ model_calls: 1 });
  });
});

describe("meteredAuditDb", () => {
  it("counts the handoffs a flushed batch completes, the rows D1 wrote and the bytes of the values", async () => {
    const scope = { tenant: "meter-c", session_id: "ses_meter" };
    const actor = { actor: "api", actor_type: "user" as const };
    const records = [
      auditEvent(scope, { action: "session.created", actor, details: { agent: "a" } }, Date.now()),
      auditEvent(scope, { action: "handoff.completed", actor, handoff_id: "hof_1", details: {} }, Date.now()),
    ];
    await writeAuditBatch(meteredAuditDb(env, env.DB, records), records);
    const usage = await eventually(
      () => counts("meter-c"),
      (u) => u.sum.handoffs === 1,
      { what: "the flush counted" },
    );
    expect(usage.sum.d1_bytes_written).toBe(recordBytes(records[0]!) + recordBytes(records[1]!));
    // Two audit_log rows with their indexes, and the index rows the records imply.
    expect(usage.sum.d1_rows_written).toBeGreaterThanOrEqual(2);
    // The same batch sent again writes no audit row twice; D1 says what it did write.
    const before = usage.sum.d1_rows_written!;
    await writeAuditBatch(meteredAuditDb(env, env.DB, records), records);
    const again = await eventually(
      () => counts("meter-c"),
      (u) => u.sum.handoffs === 2,
      { what: "the second flush counted" },
    );
    expect(again.sum.d1_rows_written! - before).toBeLessThan(before);
  });
});
