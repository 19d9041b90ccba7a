import { retentionDays } from "../audit/retention";
import type { Env } from "../env";
import { unwrap } from "../errors";
import { quotaViews } from "../quotas/views";
import { DAY_MS, hourOf } from "../quotas/windows";
import { agentCount } from "../registry/store";
import { toolCount } from "../registry/tool-store";
import { tenantRpc } from "../rpc/stubs";
import type { UsageReport } from "../schemas/usage";
import { toCounts } from "../usage/counts";
import { USAGE_RETENTION_DAYS, type UsagePeriod, usageBuckets } from "../usage/report";

/**
 * A tenant's usage report (docs/operations.md, Usage): its hours from its object summed into
 * the period's buckets, and each quota with its use now. Reads only: the tenant's object, and
 * D1 for the agents and tools it holds.
 */
export async function usageReport(env: Env, tenant: string, period: UsagePeriod): Promise<UsageReport> {
  const now = Date.now();
  // What D1 holds of the tenant: what it wrote over the days D1 keeps it (the usage kept at most).
  const keptDays = Math.min(retentionDays(env.AUDIT_RETENTION_DAYS) ?? USAGE_RETENTION_DAYS, USAGE_RETENTION_DAYS);
  const [read, agents, tools] = await Promise.all([
    tenantRpc(env, tenant).usage(
      tenant,
      hourOf(period.from),
      hourOf(period.to - 1) + 1,
      hourOf(now - keptDays * DAY_MS),
    ),
    agentCount(env.DB, tenant),
    toolCount(env.DB, tenant),
  ]);
  const usage = unwrap(read);
  const { buckets, total } = usageBuckets(usage.hours, period.from, period.to, period.granularity);
  return {
    tenant,
    from: new Date(period.from).toISOString(),
    to: new Date(period.to).toISOString(),
    granularity: period.granularity,
    buckets,
    totals: toCounts(total),
    d1_bytes_stored_estimate: usage.d1_bytes_since,
    quotas: quotaViews(
      usage.limits,
      usage.sources,
      {
        // The platform's limiter counts requests and does not say how many.
        requests_per_minute: null,
        sessions_per_day: usage.windows.sessions_today,
        runs_per_minute: usage.windows.runs_this_minute,
        model_tokens_per_day: usage.windows.tokens_today,
        agents,
        tools,
      },
      usage.at,
    ),
  };
}
