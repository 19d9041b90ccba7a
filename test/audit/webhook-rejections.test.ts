import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type Rejection, RejectionCounter, SAMPLE_WINDOW_MS } from "../../src/audit/rejection-counter";
import { rejectionStatements, rejectionStats } from "../../src/audit/webhook-rejections";

/**
 * Refusal counts in D1: isolates flush independently, so the counts add up and the minute's
 * one sample is decided in the write itself, whichever isolate gets there first.
 */

const T0 = Date.now() - (Date.now() % SAMPLE_WINDOW_MS);

const refusal = (tenant: string, at: number, reason = "bad_signature"): Rejection => ({
  tenant,
  source: "crm",
  reason,
  webhook_id: `msg_${at}`,
  attempted: null,
  at,
});

async function flush(counter: RejectionCounter) {
  const batch = counter.take()!;
  await env.DB.batch(rejectionStatements(env.DB, batch));
  counter.written(batch);
}

const sampleCount = async (tenant: string) =>
  env.DB.prepare("SELECT COUNT(*) AS n FROM audit_log WHERE tenant = ?1 AND action = 'webhook.rejected'")
    .bind(tenant)
    .first<number>("n");

describe("webhook refusal counts in D1", () => {
  it("three isolates flushing the same minute: the counts add up, one sample is written", async () => {
    const isolates = [new RejectionCounter(), new RejectionCounter(), new RejectionCounter()];
    isolates.forEach((counter, i) => {
      for (let n = 0; n <= i; n++) counter.add(refusal("t1", T0 + i * 10 + n));
    });
    await Promise.all(isolates.map(flush));
    const [stats] = await rejectionStats(env.DB, "t1");
    expect(stats).toMatchObject({ source: "crm", rejected: 6, by_reason: { bad_signature: 6 } });
    expect(stats!.first_rejected_at).toBe(new Date(T0).toISOString());
    expect(stats!.last_sample_minute).toBe(new Date(T0).toISOString());
    expect(await sampleCount("t1")).toBe(1);
  });

  it("a later minute gets its own sample; a late flush of an earlier minute gets none", async () => {
    const now = new RejectionCounter();
    now.add(refusal("t2", T0 + SAMPLE_WINDOW_MS));
    await flush(now);
    const late = new RejectionCounter();
    late.add(refusal("t2", T0 + 5, "stale"));
    await flush(late);
    expect(await sampleCount("t2")).toBe(1);
    const [stats] = await rejectionStats(env.DB, "t2");
    expect(stats).toMatchObject({ rejected: 2, by_reason: { bad_signature: 1, stale: 1 } });
    expect(stats!.last_sample_minute).toBe(new Date(T0 + SAMPLE_WINDOW_MS).toISOString());
    const next = new RejectionCounter();
    next.add(refusal("t2", T0 + 2 * SAMPLE_WINDOW_MS));
    await flush(next);
    expect(await sampleCount("t2")).toBe(2);
  });

  it("a tenant reads its own sources only", async () => {
    expect(await rejectionStats(env.DB, "nobody-here")).toEqual([]);
  });
});
