import * as z from "zod";

/**
 * A tenant's quotas (docs/operations.md, Quotas): six limits, each with a deployment default
 * (Worker vars) the operator may override per tenant. A limit over a window (a minute, a UTC
 * day) frees itself when the window ends; a count (agents, tools) frees when one is deleted.
 */

export const LIMIT_NAMES = [
  "requests_per_minute",
  "sessions_per_day",
  "runs_per_minute",
  "model_tokens_per_day",
  "agents",
  "tools",
] as const;
export const LimitName = z.enum(LIMIT_NAMES);
export type LimitName = z.infer<typeof LimitName>;

/** The window a limit counts over; null for a count of things held (agents, tools). */
export const QuotaWindow = z.enum(["minute", "day"]);
export type QuotaWindow = z.infer<typeof QuotaWindow>;

/** The largest value a limit takes (a bound for the stored numbers, not a recommendation). */
export const MAX_LIMIT = 1_000_000_000_000;

/** A limit's value: how many, or null for no limit. */
export const LimitValue = z.number().int().min(0).max(MAX_LIMIT).nullable();
export type LimitValue = z.infer<typeof LimitValue>;

/** Every limit with its value. */
export const Limits = z.strictObject(
  Object.fromEntries(LIMIT_NAMES.map((name) => [name, LimitValue])) as Record<LimitName, typeof LimitValue>,
);
export type Limits = z.infer<typeof Limits>;

/**
 * The operator's overrides for one tenant: a limit named here replaces the deployment's
 * default (null: no limit); one left out keeps the default.
 */
export const QuotaOverrides = Limits.partial();
export type QuotaOverrides = z.infer<typeof QuotaOverrides>;

/** Where a limit's value comes from. */
export const LimitSource = z.enum(["default", "override"]);
export type LimitSource = z.infer<typeof LimitSource>;

/** One limit as the API shows it: its value, where it comes from, and its use now. */
export const QuotaView = z.strictObject({
  limit: LimitName,
  /** null: no limit. */
  value: LimitValue,
  source: LimitSource,
  /** The window it counts over; null for a count of things held. */
  window: QuotaWindow.nullable(),
  /**
   * The use so far in the current window (or the things held). null for requests per minute:
   * the platform's rate limiter counts those and does not tell.
   */
  used: z.number().int().min(0).nullable(),
  /** When the current window ends (ISO 8601); null for a count. */
  resets_at: z.string().nullable(),
});
export type QuotaView = z.infer<typeof QuotaView>;

/** A tenant's limits as the operator sees them: each value with its source, and the overrides stored. */
export const TenantQuotas = z.strictObject({
  tenant: z.string(),
  limits: Limits,
  sources: z.record(LimitName, LimitSource),
  overrides: QuotaOverrides,
  /** Request tiers the deployment has (the values `requests_per_minute` may take besides null). */
  request_tiers: z.array(z.number().int().min(1)),
  /** Quota vars that did not parse (their built-in default stands). */
  warnings: z.array(z.string()),
});
export type TenantQuotas = z.infer<typeof TenantQuotas>;
