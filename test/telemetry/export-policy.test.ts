import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  afterExportFailure,
  EXPORT_FAILING_WINDOW_MS,
  EXPORT_RETRY_DELAYS_MS,
  outcomeOfStatus,
  partialSuccessOf,
  sampled,
  shareOf,
} from "../../src/telemetry/export-policy";
import { derivedTraceId } from "../../src/telemetry/span-ids";

describe("sampled", () => {
  const ids = Array.from({ length: 2000 }, (_, i) => derivedTraceId("relay.run", `run_${i}`));

  it("0 samples nothing, 1 everything", () => {
    expect(ids.some((id) => sampled(id, 0))).toBe(false);
    expect(ids.every((id) => sampled(id, 1))).toBe(true);
  });

  it("samples about the ratio, the same answer for the same trace, and a trace sampled at r is sampled above r", () => {
    const share = ids.filter((id) => sampled(id, 0.25)).length / ids.length;
    expect(share).toBeGreaterThan(0.2);
    expect(share).toBeLessThan(0.3);
    for (const id of ids.slice(0, 200)) {
      expect(sampled(id, 0.25)).toBe(sampled(id, 0.25));
      if (sampled(id, 0.25)) expect(sampled(id, 0.5)).toBe(true);
    }
  });

  it("reads the trace id's last 13 hex digits", () => {
    expect(sampled(`${"f".repeat(19)}0000000000000`, 0.001)).toBe(true);
    expect(sampled(`${"0".repeat(19)}fffffffffffff`, 0.999)).toBe(false);
  });
});

describe("outcomeOfStatus", () => {
  it("2xx is sent; 5xx, 408 and 429 are retryable; other 4xx refused", () => {
    expect(outcomeOfStatus(200)).toEqual({ type: "sent" });
    expect(outcomeOfStatus(202)).toEqual({ type: "sent" });
    for (const status of [500, 502, 503, 504, 408, 429])
      expect(outcomeOfStatus(status).type, `${status}`).toBe("retryable");
    for (const status of [400, 401, 403, 404, 413, 415, 302])
      expect(outcomeOfStatus(status).type, `${status}`).toBe("refused");
  });
});

describe("afterExportFailure", () => {
  const down = { type: "retryable", error: "HTTP 503" } as const;

  it("retries on the delays in order, then drops", () => {
    let now = 0;
    let attempts = 0;
    for (const delay of EXPORT_RETRY_DELAYS_MS) {
      const next = afterExportFailure(down, attempts, 0, now);
      expect(next).toEqual({ type: "retry", attempts: attempts + 1, at: now + delay });
      attempts += 1;
      now += delay;
    }
    expect(afterExportFailure(down, attempts, 0, now)).toEqual({ type: "drop", attempts: attempts + 1 });
  });

  it("drops once the endpoint has been failing past the window, whatever the retries left", () => {
    expect(afterExportFailure(down, 1, 0, EXPORT_FAILING_WINDOW_MS)).toEqual({ type: "drop", attempts: 2 });
  });

  it("drops a refusal at once", () => {
    expect(afterExportFailure({ type: "refused", error: "HTTP 400" }, 0, 0, 0)).toEqual({ type: "drop", attempts: 1 });
  });
});

describe("an OTLP answer's partial success", () => {
  it("reads rejectedSpans as an int64 string or a number, with the collector's message", () => {
    expect(partialSuccessOf('{"partialSuccess":{"rejectedSpans":"3","errorMessage":"too big"}}', 10)).toEqual({
      spans: 3,
      error: "the collector rejected 3 spans: too big",
    });
    expect(partialSuccessOf('{"partialSuccess":{"rejectedSpans":2}}', 10)).toEqual({
      spans: 2,
      error: "the collector rejected 2 spans",
    });
  });

  it("takes an empty, zero, odd or non-JSON answer as a full success, and never counts more than was sent", () => {
    for (const text of [
      "",
      "{}",
      '{"partialSuccess":{}}',
      '{"partialSuccess":{"rejectedSpans":"0"}}',
      "<html>",
      "null",
    ])
      expect(partialSuccessOf(text, 5), text).toBeNull();
    expect(partialSuccessOf('{"partialSuccess":{"rejectedSpans":"-1"}}', 5)).toBeNull();
    expect(partialSuccessOf('{"partialSuccess":{"rejectedSpans":"99"}}', 5)?.spans).toBe(5);
  });
});

describe("a session's share of a request that carries several sessions' spans", () => {
  it("a failure is every session's; a full success too", () => {
    const failed = { type: "retryable" as const, error: "HTTP 503" };
    expect(shareOf(failed, { offset: 8, count: 8 })).toBe(failed);
    expect(shareOf({ type: "sent" }, { offset: 0, count: 8 })).toEqual({ type: "sent" });
  });

  it("rejected spans are counted against the request's spans in order", () => {
    const partial = { type: "sent" as const, rejected: { spans: 10, error: "the collector rejected 10 spans" } };
    expect(shareOf(partial, { offset: 0, count: 8 })).toEqual({
      type: "sent",
      rejected: { ...partial.rejected, spans: 8 },
    });
    expect(shareOf(partial, { offset: 8, count: 8 })).toEqual({
      type: "sent",
      rejected: { ...partial.rejected, spans: 2 },
    });
    expect(shareOf(partial, { offset: 16, count: 8 })).toEqual({ type: "sent" });
  });

  it("the sessions' shares add up to what the collector rejected", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 50 }), { minLength: 1, maxLength: 20 }), fc.nat(), (counts, r) => {
        const total = counts.reduce((a, b) => a + b, 0);
        const rejected = total === 0 ? 0 : (r % total) + 1;
        const outcome = { type: "sent" as const, rejected: { spans: rejected, error: "rejected" } };
        let offset = 0;
        let sum = 0;
        for (const count of counts) {
          const share = shareOf(outcome, { offset, count });
          const spans = share.type === "sent" ? (share.rejected?.spans ?? 0) : -1;
          expect(spans).toBeGreaterThanOrEqual(0);
          expect(spans).toBeLessThanOrEqual(count);
          sum += spans;
          offset += count;
        }
        expect(sum).toBe(Math.min(rejected, total));
      }),
    );
  });
});
