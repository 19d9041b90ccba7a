import * as z from "zod";
import { QuotaView } from "./quotas";

/**
 * What a tenant used, hour by hour (docs/api.md, Usage): the counts `GET /v1/usage` sums into
 * hours or days, and the same for every tenant on the operator's routes.
 */

const Count = z.number().int().min(0);

/** Model calls of one provider and model. */
export const ModelUsage = z.strictObject({
  provider: z.string(),
  model: z.string(),
  calls: Count,
  input_tokens: Count,
  output_tokens: Count,
});
export type ModelUsage = z.infer<typeof ModelUsage>;

/** The counters of one period. */
export const UsageCounts = z.strictObject({
  /** Authenticated API requests (`/v1`, `/a2a`) the request limit let through. */
  requests: Count,
  /** Sessions created. */
  sessions: Count,
  /** Runs started (a message continuing a paused run starts none). */
  runs: Count,
  /** Handoffs completed. */
  handoffs: Count,
  /** Tool calls the agents' turns asked to run (handoff tools count as handoffs). */
  tool_calls: Count,
  /** Model calls (agents' turns, the LLM router, a supervisor's plan and answer), with their tokens. */
  model_calls: Count,
  input_tokens: Count,
  output_tokens: Count,
  /** D1 rows the tenant's audit trail and the lists built from it wrote (tables and indexes, as D1 counts). */
  d1_rows_written: Count,
  /** An estimate of the bytes those writes added to D1: the values written (docs/operations.md, Usage). */
  d1_bytes_written: Count,
  /** Requests and admissions refused for a quota, by limit. */
  refused: z.record(z.string(), Count),
  /** Model calls by provider and model. */
  models: z.array(ModelUsage),
});
export type UsageCounts = z.infer<typeof UsageCounts>;

export const UsageBucket = UsageCounts.extend({
  /** The start of the hour or UTC day (ISO 8601). */
  start: z.string(),
});
export type UsageBucket = z.infer<typeof UsageBucket>;

export const Granularity = z.enum(["hour", "day"]);
export type Granularity = z.infer<typeof Granularity>;

/** `GET /v1/usage`: the buckets of the period asked, their totals, and the quotas now. */
export const UsageReport = z.strictObject({
  tenant: z.string(),
  from: z.string(),
  to: z.string(),
  granularity: Granularity,
  /** Every bucket of the period in order, empty ones included. */
  buckets: z.array(UsageBucket),
  totals: UsageCounts,
  /**
   * An estimate of what the tenant holds in D1 now: the bytes its audit trail wrote over the
   * days D1 keeps it (AUDIT_RETENTION_DAYS, at most the days usage is kept).
   */
  d1_bytes_stored_estimate: Count,
  quotas: z.array(QuotaView),
});
export type UsageReport = z.infer<typeof UsageReport>;

/** The operator's view across tenants: each tenant's totals over the period. */
export const TenantsUsage = z.strictObject({
  from: z.string(),
  to: z.string(),
  tenants: z.array(
    z.strictObject({
      tenant: z.string(),
      totals: UsageCounts,
      d1_bytes_stored_estimate: Count,
      quotas: z.array(QuotaView),
    }),
  ),
});
export type TenantsUsage = z.infer<typeof TenantsUsage>;
