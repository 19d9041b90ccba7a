import { describe, expect, it } from "vitest";
import { amount, axisTop, METRICS, usageBars } from "../../public/app/usage-chart.js";
import { call } from "../api/helpers";

/** The Usage page's chart (public/app/usage-chart.js) from a report the Worker really answered. */

describe("usageBars", () => {
  it("gives every day of the report a bar, in order, scaled to a round axis", async () => {
    for (let i = 0; i < 3; i++) await call("GET", "/v1/agents");
    const report = (await call("GET", "/v1/usage")).json;
    expect(report.buckets).toHaveLength(30);
    const { top, bars } = usageBars(report.buckets, "requests", { width: 300, height: 100 });
    expect(bars).toHaveLength(30);
    expect(bars.map((b: { day: string }) => b.day)).toEqual(
      report.buckets.map((b: { start: string }) => b.start.slice(0, 10)),
    );
    expect(bars[0]).toMatchObject({ x: 1, width: 8 });
    expect(bars[29].x).toBe(291);
    for (const bar of bars) {
      expect(bar.y + bar.height).toBe(100);
      expect(bar.height).toBe(Math.round((bar.value / top) * 10000) / 100);
    }
    expect(top).toBeGreaterThanOrEqual(Math.max(...bars.map((b: { value: number }) => b.value)));
  });

  it("reads every metric of a bucket; tokens are input and output together", () => {
    const bucket = {
      start: "2026-03-04T00:00:00.000Z",
      requests: 1,
      sessions: 2,
      runs: 3,
      handoffs: 4,
      tool_calls: 5,
      model_calls: 6,
      input_tokens: 7,
      output_tokens: 8,
      d1_rows_written: 9,
      d1_bytes_written: 10,
    };
    expect(Object.fromEntries(Object.entries(METRICS).map(([name, m]) => [name, m.of(bucket)]))).toEqual({
      requests: 1,
      sessions: 2,
      runs: 3,
      handoffs: 4,
      tool_calls: 5,
      model_calls: 6,
      tokens: 15,
      d1_rows_written: 9,
      d1_bytes_written: 10,
    });
  });
});

describe("axisTop and amount", () => {
  it("round the axis up to 1, 2 or 5 times a power of ten; an empty chart has an axis of 1", () => {
    expect([0, 1, 3, 7, 10, 11, 199, 201, 5000, 5001].map(axisTop)).toEqual([
      1, 1, 5, 10, 10, 20, 200, 500, 5000, 10000,
    ]);
  });

  it("write counts with separators and bytes in kB and MB", () => {
    expect(amount(1234567, "runs")).toBe("1,234,567");
    expect([999, 12_345, 3_400_000].map((n) => amount(n, "d1_bytes_written"))).toEqual(["999 B", "12.3 kB", "3.4 MB"]);
  });
});
