import { describe, expect, it } from "vitest";
import {
  addUsage,
  counted,
  emptyUsage,
  isEmpty,
  MAX_MODELS,
  modelCall,
  refusedFor,
  toCounts,
} from "../../src/usage/counts";
import { usageBuckets, usagePeriod } from "../../src/usage/report";
import { UsageTally } from "../../src/usage/tally";

const HOUR = 3_600_000;
const at = (iso: string) => Date.parse(iso);

describe("usage counters", () => {
  it("add counters, refusals and model calls", () => {
    const usage = addUsage(counted({ requests: 2, runs: 1 }), counted({ requests: 3 }));
    addUsage(usage, modelCall("openai", "gpt-x", { input: 42, output: 7 }));
    addUsage(usage, modelCall("openai", "gpt-x", { input: 8, output: 3 }));
    addUsage(usage, modelCall("local", "local", undefined));
    addUsage(usage, refusedFor("runs_per_minute"));
    expect(toCounts(usage)).toEqual({
      requests: 5,
      sessions: 0,
      runs: 1,
      handoffs: 0,
      tool_calls: 0,
      model_calls: 3,
      input_tokens: 50,
      output_tokens: 10,
      d1_rows_written: 0,
      d1_bytes_written: 0,
      refused: { runs_per_minute: 1 },
      models: [
        { provider: "openai", model: "gpt-x", calls: 2, input_tokens: 50, output_tokens: 10 },
        { provider: "local", model: "local", calls: 1, input_tokens: 0, output_tokens: 0 },
      ],
    });
    expect(isEmpty(emptyUsage())).toBe(true);
    expect(isEmpty(counted({ requests: 0 }))).toBe(true);
    expect(isEmpty(usage)).toBe(false);
  });

  it("keep at most MAX_MODELS models apart and count the rest together, totals exact", () => {
    const usage = emptyUsage();
    for (let i = 0; i < MAX_MODELS + 5; i++) addUsage(usage, modelCall("openai", `m${i}`, { input: 1, output: 1 }));
    const counts = toCounts(usage);
    expect(counts.models).toHaveLength(MAX_MODELS + 1);
    expect(counts.models[0]).toEqual({
      provider: "other",
      model: "other",
      calls: 5,
      input_tokens: 5,
      output_tokens: 5,
    });
    expect(counts.model_calls).toBe(MAX_MODELS + 5);
  });
});

describe("UsageTally", () => {
  it("keeps each tenant's counts by hour until taken, and takes them once", () => {
    const tally = new UsageTally();
    tally.add("alpha", at("2026-03-04T10:59:59Z"), counted({ requests: 1 }));
    tally.add("alpha", at("2026-03-04T11:00:00Z"), counted({ requests: 1 }));
    tally.add("alpha", at("2026-03-04T11:30:00Z"), counted({ requests: 2 }));
    tally.add("beta", at("2026-03-04T11:30:00Z"), counted({ sessions: 1 }));
    tally.add("beta", at("2026-03-04T11:30:00Z"), counted({ runs: 0 }));
    const taken = tally.take();
    expect(taken.map((t) => [t.tenant, t.hours.map((h) => [h.hour, h.usage.counts])])).toEqual([
      [
        "alpha",
        [
          [at("2026-03-04T10:00:00Z") / HOUR, { requests: 1 }],
          [at("2026-03-04T11:00:00Z") / HOUR, { requests: 3 }],
        ],
      ],
      ["beta", [[at("2026-03-04T11:00:00Z") / HOUR, { sessions: 1 }]]],
    ]);
    expect(tally.take()).toEqual([]);
    tally.putBack(taken[0]!);
    tally.add("alpha", at("2026-03-04T11:10:00Z"), counted({ requests: 1 }));
    expect(tally.take()[0]!.hours.map((h) => h.usage.counts.requests)).toEqual([1, 4]);
  });
});

describe("usageBuckets", () => {
  const hours = [
    { hour: at("2026-03-03T23:00:00Z") / HOUR, usage: counted({ runs: 1 }) },
    { hour: at("2026-03-04T01:00:00Z") / HOUR, usage: counted({ runs: 2 }) },
    { hour: at("2026-03-04T22:00:00Z") / HOUR, usage: counted({ runs: 4 }) },
    { hour: at("2026-03-06T00:00:00Z") / HOUR, usage: counted({ runs: 8 }) },
  ];

  it("sums hours into UTC days, empty days included, within the period", () => {
    const { buckets, total } = usageBuckets(hours, at("2026-03-03T12:00:00Z"), at("2026-03-06T00:00:00Z"), "day");
    expect(buckets.map((b) => [b.start, b.runs])).toEqual([
      ["2026-03-03T00:00:00.000Z", 1],
      ["2026-03-04T00:00:00.000Z", 6],
      ["2026-03-05T00:00:00.000Z", 0],
    ]);
    expect(total.counts.runs).toBe(7);
  });

  it("keeps hours apart at hour granularity", () => {
    const { buckets } = usageBuckets(hours, at("2026-03-04T00:30:00Z"), at("2026-03-04T02:00:00Z"), "hour");
    expect(buckets.map((b) => [b.start, b.runs])).toEqual([
      ["2026-03-04T00:00:00.000Z", 0],
      ["2026-03-04T01:00:00.000Z", 2],
    ]);
  });
});

describe("usagePeriod", () => {
  const now = Date.parse("2026-03-04T10:20:30Z");

  it("defaults to the last 30 UTC days by day, today included, and the last 24 hours by hour", () => {
    expect(usagePeriod({ granularity: "day" }, now)).toEqual({
      from: Date.parse("2026-02-03T00:00:00Z"),
      to: now,
      granularity: "day",
    });
    expect(usagePeriod({ granularity: "hour" }, now)).toEqual({
      from: Date.parse("2026-03-03T10:00:00Z"),
      to: now,
      granularity: "hour",
    });
  });

  it("refuses a period that ends before it starts, or has too many buckets", () => {
    expect(usagePeriod({ granularity: "day", from: "2026-03-05T00:00:00Z" }, now)).toEqual({
      problem: "must be after from",
      path: "to",
    });
    expect(usagePeriod({ granularity: "day", from: "2024-01-01T00:00:00Z" }, now)).toMatchObject({ path: "from" });
  });
});
