import type { Result } from "../errors";
import type { Ask } from "../quotas/admission";
import type { LeaseTerms } from "../quotas/lease";
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
  /** The lease it was given out from by this isolate, if any (src/services/admissions.ts). */
  lease?: string;
}

/**
 * A lease granted with an admission (docs/operations.md, Quotas): `count` more admissions of
 * the same kind, counted where the admission was, that the isolate gives out itself for `ms`.
 */
export interface LeaseGrant extends LeaseTerms {
  id: string;
}

/** An admission as the tenant's object answers it: with a lease when one was asked for and granted. */
export interface Granted extends Admission {
  grant?: LeaseGrant;
}

/** A lease that ended: where it was counted, and how many of its admissions were not given out. */
export interface EndedLease {
  id: string;
  hour: number;
  minute: number;
  sessions: number;
  runs: number;
}

/**
 * How long after a lease's end the tenant's object waits for its unused admissions before its
 * usage views count them as used (a lease's end is one call, with the object's deadline).
 */
export const LEASE_END_GRACE_MS = 5_000;

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

/** A run a session of the tenant started or resumed, and when (ms); `agent` is the one it started with. */
export interface RecentRun {
  run_id: string;
  session_id: string;
  agent: string;
  at: number;
}

/**
 * How long the tenant's object remembers a run after it started or resumed: D1 hears of it when
 * its session's outbox flushes (docs/architecture.md, The outbox: within half a second, longer
 * while D1 retries), so a tenant-wide list reads these live (docs/a2a.md, ListTasks).
 */
export const RECENT_RUNS_MS = 30_000;

/** The most recent runs a tenant-wide list reads live; older ones are D1's by then. */
export const MAX_RECENT_RUNS = 100;

export interface TenantRpc {
  /**
   * Counts a session, a run or both when the tenant's quotas allow them, in one synchronous
   * step; QUOTA_EXCEEDED (nothing counted) when one does not. With `lease` > 0, up to that many
   * more may be granted and counted with it (src/quotas/lease.ts).
   */
  admit(tenant: string, ask: Ask, lease?: number): Promise<Result<Granted>>;
  /** Takes back an admission whose session or run was not made after all. */
  release(tenant: string, admission: Admission): Promise<Result<{ released: boolean }>>;
  /** Takes back a lease's admissions that were not given out; its usage views then count the rest. */
  endLease(tenant: string, lease: EndedLease): Promise<Result<{ ended: boolean }>>;
  /** Adds what isolates counted; answers the limits, so a caller's cache of them stays fresh. */
  record(tenant: string, hours: { hour: number; usage: Usage }[]): Promise<Result<TenantLimits>>;
  limits(tenant: string): Promise<Result<TenantLimits>>;
  /** The hours in [fromHour, toHour), the window uses now, and the D1 bytes written since `storedFromHour`. */
  usage(tenant: string, fromHour: number, toHour: number, storedFromHour?: number): Promise<Result<TenantUsage>>;
  /** Notes a run as just started or resumed (kept RECENT_RUNS_MS). */
  noteRun(tenant: string, run: Omit<RecentRun, "at">): Promise<Result<{ noted: true }>>;
  /** The runs noted in the last RECENT_RUNS_MS, newest first, at most MAX_RECENT_RUNS. */
  recentRuns(tenant: string): Promise<Result<RecentRun[]>>;
  /** Replaces the operator's overrides (null: none, the defaults apply). */
  setOverrides(tenant: string, overrides: QuotaOverrides | null): Promise<Result<TenantLimits>>;
}
