import { DAY_MS, HOUR_MS } from "../quotas/windows";
import type { Granularity, UsageBucket } from "../schemas/usage";
import { addUsage, emptyUsage, toCounts, type Usage } from "./counts";

/** A tenant's hours summed into the buckets of a period (`GET /v1/usage`). Pure. */

/** Days of usage the tenant's object keeps, hour by hour (a report reaches back this far at most). */
export const USAGE_RETENTION_DAYS = 100;

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

/** A report's period: [from, to), in buckets of `granularity`. */
export interface UsagePeriod {
  from: number;
  to: number;
  granularity: Granularity;
}

/**
 * The period a query names (ISO 8601 times), or why it names none. By default: the last 30 UTC
 * days by day (today included), the last 24 hours by hour, up to now. `from` is moved back to
 * the start of its bucket.
 */
export function usagePeriod(
  query: { from?: string; to?: string; granularity: Granularity },
  now: number,
): UsagePeriod | { problem: string; path: string } {
  const size = query.granularity === "hour" ? HOUR_MS : DAY_MS;
  const to = query.to === undefined ? now : Date.parse(query.to);
  const back = query.granularity === "hour" ? 24 * HOUR_MS : 30 * DAY_MS;
  const start =
    query.from === undefined ? to - back + (query.granularity === "day" ? DAY_MS : 0) : Date.parse(query.from);
  const from = Math.floor(start / size) * size;
  if (!(to > from)) return { problem: "must be after from", path: "to" };
  const buckets = Math.ceil((to - from) / size);
  if (buckets > MAX_BUCKETS[query.granularity])
    return {
      problem: `asks for ${buckets} buckets; at most ${MAX_BUCKETS[query.granularity]} by ${query.granularity}`,
      path: "from",
    };
  return { from, to, granularity: query.granularity };
}
