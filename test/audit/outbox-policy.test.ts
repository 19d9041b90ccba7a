import { describe, expect, it } from "vitest";
import {
  chunk,
  FLUSH_BACKOFF_MS,
  FLUSH_BATCH_ROWS,
  FLUSH_WINDOW_MS,
  flushBackoffMs,
  nextFlushAt,
  ROWS_PER_STATEMENT,
} from "../../src/audit/outbox-policy";

describe("outbox policy", () => {
  it("backs off 1 s, 2 s, 5 s, 15 s, then 60 s forever", () => {
    expect([1, 2, 3, 4, 5, 6, 50, 10_000].map(flushBackoffMs)).toEqual([
      1_000, 2_000, 5_000, 15_000, 60_000, 60_000, 60_000, 60_000,
    ]);
    expect(FLUSH_BACKOFF_MS.at(-1)).toBe(60_000);
  });

  it("treats a first attempt (0 failures) like the first failure", () => {
    expect(flushBackoffMs(0)).toBe(1_000);
  });

  it("starts a record's flush FLUSH_WINDOW_MS after it was written", () => {
    expect(FLUSH_WINDOW_MS).toBe(500);
    expect(nextFlushAt(10_000)).toBe(10_000 + FLUSH_WINDOW_MS);
    expect(nextFlushAt(10_000, 50)).toBe(10_050);
  });

  it("keeps a batch within D1's 100 bound parameters per statement", () => {
    expect(ROWS_PER_STATEMENT * 10).toBeLessThanOrEqual(100);
    expect(FLUSH_BATCH_ROWS).toBe(50);
  });

  it("chunks in order, the last chunk shorter", () => {
    expect(chunk([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(chunk([], 3)).toEqual([]);
    expect(() => chunk([1], 0)).toThrow(RangeError);
  });
});
