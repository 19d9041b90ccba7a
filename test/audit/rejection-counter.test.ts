import { describe, expect, it } from "vitest";
import { type Rejection, RejectionCounter, SAMPLE_WINDOW_MS, windowOf } from "../../src/audit/rejection-counter";

/** The in-memory policy behind webhook refusal counts: what is counted, which refusal is the minute's sample. */

const T0 = 1_800_000_000_000 - (1_800_000_000_000 % SAMPLE_WINDOW_MS);

const refusal = (at: number, over: Partial<Rejection> = {}): Rejection => ({
  tenant: "alpha",
  source: "crm",
  reason: "bad_signature",
  webhook_id: `msg_${at}`,
  attempted: null,
  at,
  ...over,
});

describe("RejectionCounter", () => {
  it("counts per tenant, source and reason, with the first and last time", () => {
    const counter = new RejectionCounter();
    for (let i = 0; i < 5; i++) counter.add(refusal(T0 + i));
    counter.add(refusal(T0 + 10, { reason: "stale" }));
    counter.add(refusal(T0 + 11, { source: "desk" }));
    const batch = counter.take()!;
    expect(batch.counts).toEqual([
      { tenant: "alpha", source: "crm", reason: "bad_signature", count: 5, first_at: T0, last_at: T0 + 4 },
      { tenant: "alpha", source: "crm", reason: "stale", count: 1, first_at: T0 + 10, last_at: T0 + 10 },
      { tenant: "alpha", source: "desk", reason: "bad_signature", count: 1, first_at: T0 + 11, last_at: T0 + 11 },
    ]);
    expect(counter.take()).toBeNull();
  });

  it("offers one sample per source: the first refusal of the newest minute", () => {
    const counter = new RejectionCounter();
    counter.add(refusal(T0 + 5));
    counter.add(refusal(T0 + 1));
    counter.add(refusal(T0 + 7, { reason: "stale" }));
    counter.add(refusal(T0 + 9, { source: "desk" }));
    let batch = counter.take()!;
    expect(batch.samples.map((s) => [s.source, s.at, s.window])).toEqual([
      ["crm", T0 + 1, windowOf(T0)],
      ["desk", T0 + 9, windowOf(T0)],
    ]);
    counter.add(refusal(T0 + 10));
    counter.add(refusal(T0 + SAMPLE_WINDOW_MS + 3));
    batch = counter.take()!;
    expect(batch.samples.map((s) => s.at)).toEqual([T0 + SAMPLE_WINDOW_MS + 3]);
  });

  it("offers no sample for a minute it has written one for", () => {
    const counter = new RejectionCounter();
    counter.add(refusal(T0));
    counter.written(counter.take()!);
    for (let i = 1; i < 100; i++) counter.add(refusal(T0 + i * 100));
    const batch = counter.take()!;
    expect(batch.samples).toEqual([]);
    expect(batch.counts[0]!.count).toBe(99);
    counter.add(refusal(T0 + SAMPLE_WINDOW_MS));
    expect(counter.take()!.samples).toHaveLength(1);
  });

  it("a batch that could not be written is counted again with what came since, its sample still offered", () => {
    const counter = new RejectionCounter();
    counter.add(refusal(T0));
    counter.add(refusal(T0 + 1));
    const failed = counter.take()!;
    counter.add(refusal(T0 + 2));
    counter.putBack(failed);
    const batch = counter.take()!;
    expect(batch.counts).toEqual([
      { tenant: "alpha", source: "crm", reason: "bad_signature", count: 3, first_at: T0, last_at: T0 + 2 },
    ]);
    expect(batch.samples.map((s) => s.at)).toEqual([T0]);
  });

  it("stays as small as the sources times the reasons, however many refusals", () => {
    const counter = new RejectionCounter();
    for (let i = 0; i < 10_000; i++)
      counter.add(refusal(T0 + i * 50, { reason: i % 2 ? "stale" : "bad_signature", webhook_id: `m${i}` }));
    const batch = counter.take()!;
    expect(batch.counts).toHaveLength(2);
    expect(batch.counts.reduce((n, c) => n + c.count, 0)).toBe(10_000);
    expect(batch.samples).toHaveLength(1);
  });
});
