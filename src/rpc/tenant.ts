import type { Result } from "../errors";
import type { Ask } from "../quotas/admission";
import type { LimitName, LimitSource, Limits, QuotaOverrides } from "../schemas/quotas";
import type { Usage } from "../usage/counts";

/**
 * The TenantDO's RPC contract (durable-objects/tenant/tenant.ts implements it): one object
 * per tenant that admits sessions and runs against the tenant's quotas, keeps its usage hour
 * by hour, and holds the operator's overrides (docs/operations.md, Quotas and Usage). Types only.
 */

/** Where an admission was counted, so that it can be taken back. */
export interface Admission {
  hour: number;
  minute: number;
  sessions: boolean;
  runs: boolean;
}

/** The tenant's limits now: the defaults under its overrides, and what is stored. */
export interface TenantLimits {
  limits: Limits;
  sources: Record<LimitName, LimitSource>;
  overrides: QuotaOverrides;
  /** Worker vars that did not parse (their built-in default stands). */
  warnings: string[];
}

/** The use of the window limits at the time asked. */
export interface WindowUse {
  sessions_today: number;
  runs_this_minute: number;
  tokens_today: number;
}

/** The hours of a period, the window uses now, and the limits. */
export interface TenantUsage extends TenantLimits {
  hours: { hour: number; usage: Usage }[];
  windows: WindowUse;
  /** D1 bytes written since the hour asked for (what D1 still holds of the tenant, as an estimate). */
  d1_bytes_since: number;
  /** The time the windows were read at (ms since the epoch). */
  at: number;
}

export interface TenantRpc {
  /**
   * Counts a session, a run or both when the tenant's quotas allow them, in one synchronous
   * step; QUOTA_EXCEEDED (nothing counted) when one does not.
   */
  admit(tenant: string, ask: Ask): Promise<Result<Admission>>;
  /** Takes back an admission whose session or run was not made after all. */
  release(tenant: string, admission: Admission): Promise<Result<{ released: boolean }>>;
  /** Adds what isolates counted; answers the limits, so a caller's cache of them stays fresh. */
  record(tenant: string, hours: { hour: number; usage: Usage }[]): Promise<Result<TenantLimits>>;
  limits(tenant: string): Promise<Result<TenantLimits>>;
  /** The hours in [fromHour, toHour), the window uses now, and the D1 bytes written since `storedFromHour`. */
  usage(tenant: string, fromHour: number, toHour: number, storedFromHour?: number): Promise<Result<TenantUsage>>;
  /** Replaces the operator's overrides (null: none, the defaults apply). */
  setOverrides(tenant: string, overrides: QuotaOverrides | null): Promise<Result<TenantLimits>>;
}
