import { DAY_MS, HOUR_MS } from "../quotas/windows";
import type { Granularity, UsageBucket } from "../schemas/usage";
import { addUsage, emptyUsage, toCounts, type Usage } from "./counts";

/** A tenant's hours summed into the buckets of a period (`GET /v1/usage`). Pure. */

/** The most buckets one report holds. */
export const MAX_BUCKETS = { hour: 24 * 31, day: 366 } as const;

/** The period's bucket starts, aligned to the granularity: from the bucket holding `from` up to `to` (exclusive). */
export function bucketStarts(from: number, to: number, granularity: Granularity): number[] {
  const size = granularity === "hour" ? HOUR_MS : DAY_MS;
  const starts: number[] = [];
  for (let start = Math.floor(from / size) * size; start < to; start += size) starts.push(start);
  return starts;
}

/** Every bucket of the period, empty ones included, and the period's total. */
export function usageBuckets(
  hours: readonly { hour: number; usage: Usage }[],
  from: number,
  to: number,
  granularity: Granularity,
): { buckets: UsageBucket[]; total: Usage } {
  const size = granularity === "hour" ? HOUR_MS : DAY_MS;
  const starts = bucketStarts(from, to, granularity);
  const sums = new Map(starts.map((start) => [start, emptyUsage()]));
  const total = emptyUsage();
  for (const { hour, usage } of hours) {
    const start = Math.floor((hour * HOUR_MS) / size) * size;
    const bucket = sums.get(start);
    if (!bucket) continue;
    addUsage(bucket, usage);
    addUsage(total, usage);
  }
  return {
    buckets: starts.map((start) => ({ start: new Date(start).toISOString(), ...toCounts(sums.get(start)!) })),
    total,
  };
}
