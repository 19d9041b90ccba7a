import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../app-env";
import { RelayError } from "../errors";
import { Granularity } from "../schemas/usage";
import { usageReport } from "../services/usage-report";
import { type UsagePeriod, usagePeriod } from "../usage/report";
import { readQuery } from "./validate";

/** `GET /v1/usage`: what the tenant used, by hour or UTC day, and its quotas now (docs/api.md, Usage). */

export const UsageQuery = z.strictObject({
  /** The period's start (ISO 8601); by default 30 days (by day) or 24 hours (by hour) before `to`. */
  from: z.iso.datetime({ offset: true }).optional(),
  /** The period's end, exclusive (ISO 8601); by default now. */
  to: z.iso.datetime({ offset: true }).optional(),
  granularity: Granularity.default("day"),
});

/** The period a usage query names, or VALIDATION_FAILED. */
export function periodOf(query: z.output<typeof UsageQuery>): UsagePeriod {
  const period = usagePeriod(query, Date.now());
  if ("problem" in period)
    throw new RelayError("VALIDATION_FAILED", `The period ${period.problem}.`, {
      issues: [{ path: period.path, message: period.problem }],
    });
  return period;
}

export const usage = new Hono<AppEnv>().get("/", async (c) => {
  const period = periodOf(readQuery(c, UsageQuery));
  return c.json(await usageReport(c.env, c.get("tenant"), period));
});
