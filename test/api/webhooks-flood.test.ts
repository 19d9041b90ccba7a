import { exports } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { queryAudit } from "../../src/audit/d1-store";
import { SAMPLE_WINDOW_MS } from "../../src/audit/rejection-counter";
import { UNKNOWN_SOURCE, UNKNOWN_SOURCE_TENANT } from "../../src/audit/webhook-rejections";
import { MAX_WEBHOOK_BYTES } from "../../src/schemas/webhook";
import { eventually } from "../eventually";
import { shardOf } from "../shards";
import { call } from "./helpers";

/**
 * Webhooks in cost the sender at least what they cost Relay: a delivery refused before it
 * authenticates writes nothing of its own. It is counted in the isolate, flushed as one
 * aggregate at most once a second, and sampled into the audit trail at most once per source
 * per minute; an oversized body is answered 413 however it is sent.
 */

const CRM_SECRET = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";

const worker = () => (exports as unknown as { default: Fetcher }).default;

async function post(source: string, init: { headers?: Record<string, string>; body: BodyInit }) {
  const response = await worker().fetch(`http://relay.test/v1/webhooks/${source}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...init.headers },
    body: init.body,
    ...(init.body instanceof ReadableStream ? { duplex: "half" } : {}),
  } as RequestInit);
  return { status: response.status, json: (await response.json()) as any };
}

/** Polls `read` until `done` holds (the counts reach D1 about a second after the refusals); fails after 20 s. */
const until = <T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> =>
  eventually(read, done, { timeout: 20_000, what: "the refusal counts in D1" });

const stats = async (source: string) =>
  (await call("GET", "/v1/webhooks/stats")).json.sources.find((s: { source: string }) => s.source === source);

/** The tenant's rejection samples in D1, oldest first, as the audit's reader gives them. */
async function samples(tenant: string) {
  const { records } = await queryAudit(await shardOf(tenant), tenant, { action: "webhook.rejected", limit: 1000 });
  return records.reverse().map((r): { at: string; [detail: string]: unknown } => ({ ...r.details, at: r.at }));
}

const minuteOf = (ms: number) => Math.floor(ms / SAMPLE_WINDOW_MS);

/** A body of `bytes` bytes streamed in 64 KiB chunks, with no Content-Length. */
function chunked(bytes: number): ReadableStream<Uint8Array> {
  const chunk = new Uint8Array(64 * 1024).fill(0x78);
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= bytes) return controller.close();
      const size = Math.min(chunk.byteLength, bytes - sent);
      controller.enqueue(chunk.subarray(0, size));
      sent += size;
    },
  });
}

describe("unauthenticated deliveries", () => {
  it("1,000 unsigned posts: the counter says 1,000, the audit trail has one sample per source per minute", async () => {
    const started = Date.now();
    const body = JSON.stringify({ type: "session.event", data: { session_id: "x", name: "y" } });
    for (let batch = 0; batch < 20; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) => post("crm", { body, headers: { "webhook-id": `msg_${batch}_${i}` } })),
      );
      for (const answer of answers) {
        expect(answer.status).toBe(401);
        expect(answer.json.error).toMatchObject({ code: "WEBHOOK_REJECTED", details: { reason: "missing_headers" } });
      }
    }
    const ended = Date.now();
    const counted = await until(
      () => stats("crm"),
      (s) => s?.rejected === 1000,
    );
    expect(counted).toMatchObject({ source: "crm", rejected: 1000, by_reason: { missing_headers: 1000 } });
    const rows = await samples("alpha");
    const minutes = new Set(rows.map((r) => minuteOf(Date.parse(r.at))));
    expect(rows.length).toBeGreaterThanOrEqual(1);
    // One sample per minute the flood touched, never more.
    expect(minutes.size).toBe(rows.length);
    expect(rows.length).toBeLessThanOrEqual(minuteOf(ended) - minuteOf(started) + 1);
    expect(rows[0]).toMatchObject({ source: "crm", reason: "missing_headers", sample: true });
    expect(counted.last_sample_minute).toBe(new Date(minuteOf(Date.parse(rows.at(-1)!.at)) * 60_000).toISOString());
  });

  it("unknown sources share one bucket, apart from every tenant, whatever names they invent", async () => {
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => post(`nobody-${i}`, { body: "{}", headers: { "webhook-id": `m${i}` } })),
    );
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([404]));
    const bucket = async () =>
      (await shardOf(UNKNOWN_SOURCE_TENANT))
        .prepare("SELECT count FROM webhook_rejections WHERE tenant = ?1 AND source = ?2 AND reason = ?3")
        .bind(UNKNOWN_SOURCE_TENANT, UNKNOWN_SOURCE, "unknown_source")
        .first<number>("count");
    await until(bucket, (count) => count === 60);
    const rows = await samples(UNKNOWN_SOURCE_TENANT);
    expect(rows.length).toBeGreaterThanOrEqual(1);
    expect(rows.length).toBeLessThanOrEqual(2);
    expect(rows[0]).toMatchObject({ reason: "unknown_source", source: expect.stringMatching(/^nobody-\d+$/) });
    // No tenant's key reads them.
    expect((await stats(UNKNOWN_SOURCE))?.rejected).toBeUndefined();
  });
});

describe("oversized bodies", () => {
  const TEN_MB = 10 * 1024 * 1024;
  const signed = () => {
    const id = `msg_big_${Date.now()}`;
    const at = new Date();
    return {
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": new Webhook(CRM_SECRET).sign(id, at, "not the body"),
    };
  };

  it.each([
    ["with a Content-Length, unsigned", () => ({ body: "x".repeat(TEN_MB) })],
    ["with a Content-Length, with signature headers", () => ({ body: "x".repeat(TEN_MB), headers: signed() })],
    ["chunked, unsigned", () => ({ body: chunked(TEN_MB) })],
    ["chunked, with signature headers", () => ({ body: chunked(TEN_MB), headers: signed() })],
  ])("10 MB %s: 413 PAYLOAD_TOO_LARGE with the JSON error body", async (_, init) => {
    const res = await post("desk", init());
    expect(res.status).toBe(413);
    expect(res.json).toEqual({
      error: {
        code: "PAYLOAD_TOO_LARGE",
        message: `Webhook body is larger than ${MAX_WEBHOOK_BYTES} bytes.`,
        details: { limit_bytes: MAX_WEBHOOK_BYTES },
      },
    });
  });

  it("each counted as too_large, none audited beyond the minute's sample", async () => {
    const counted = await until(
      () => stats("desk"),
      (s) => s?.by_reason?.too_large === 4,
    );
    expect(counted.rejected).toBe(4);
    expect((await samples("alpha")).filter((r) => r.source === "desk").length).toBeLessThanOrEqual(1);
  });
});
