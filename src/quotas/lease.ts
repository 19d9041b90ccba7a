import type { Limits } from "../schemas/quotas";
import type { Usage } from "../usage/counts";
import type { Ask, Used } from "./admission";
import { HOUR_MS, hourOf, MINUTE_MS, windowEnd, windowStart } from "./windows";

/**
 * Admission leases (docs/operations.md, Quotas): with an admission, the tenant's object may
 * hand the asking isolate up to a few more of the same kind to give out itself, for a short
 * time. They are counted when granted, so no mix of isolates passes a limit; a lease is only
 * asked for when the isolate sees demand, and only a small share of what each limit has left
 * is granted, so a tenant near a limit gets none and its asks are decided one by one. Pure.
 */

/** How long a lease lasts at most. */
export const LEASE_MS = 1_000;
/** The most admissions one lease holds. */
export const MAX_LEASE = 32;
/** A lease takes at most 1/LEASE_SHARE of what each applicable limit has left after the ask. */
export const LEASE_SHARE = 8;
/** How far back an isolate counts a tenant's asks to judge its demand. */
export const DEMAND_MS = 1_000;

/** A lease as granted: how many more admissions, and for how long from the grant (ms). */
export interface LeaseTerms {
  count: number;
  ms: number;
  /**
   * For runs under a tokens limit, the day's tokens left at the grant: the lease ends early once
   * its holder has counted as many in model calls (null: no tokens limit applies).
   */
  tokens: number | null;
}

/**
 * How many admissions an isolate asks to hold with this ask: the other asks of the same kind it
 * saw for the tenant in the last DEMAND_MS (`asks` counts this one), at most MAX_LEASE.
 */
export function leaseWanted(asks: number): number {
  return Math.max(0, Math.min(MAX_LEASE, Math.floor(asks) - 1));
}

/**
 * The lease granted with an admitted `ask`, or null. `used` is the windows' use with the ask
 * counted. Each limit the ask is counted against allows 1/LEASE_SHARE of its headroom (rounded
 * down: under LEASE_SHARE left, none); tokens are counted only after a model call, so the day's
 * tokens allow a lease of runs only while more than 1/LEASE_SHARE of them is left. The lease
 * ends within LEASE_MS and never past the end of a window it is counted in: the hour (its row),
 * the minute for runs (the day for sessions ends with an hour).
 */
export function leaseOf(ask: Ask, wanted: number, limits: Limits, used: Used, now: number): LeaseTerms | null {
  let count = Math.min(Math.floor(wanted), MAX_LEASE);
  const share = (limit: number, use: number) => Math.floor(Math.max(0, limit - use) / LEASE_SHARE);
  if (ask.sessions && limits.sessions_per_day !== null)
    count = Math.min(count, share(limits.sessions_per_day, used.sessions_today));
  if (ask.runs && limits.runs_per_minute !== null)
    count = Math.min(count, share(limits.runs_per_minute, used.runs_this_minute));
  const tokens = limits.model_tokens_per_day;
  if (ask.runs && tokens !== null && tokens - used.tokens_today <= tokens / LEASE_SHARE) count = 0;
  if (!(ask.sessions || ask.runs) || count <= 0) return null;
  let end = Math.min(now + LEASE_MS, (hourOf(now) + 1) * HOUR_MS);
  if (ask.runs) end = Math.min(end, windowEnd("minute", now));
  const ms = end - now;
  if (ms <= 0) return null;
  return { count, ms, tokens: ask.runs && tokens !== null ? tokens - used.tokens_today : null };
}

/** A lease the tenant's object granted and has not heard the end of: what it counted, and where. */
export interface OpenLease {
  hour: number;
  minute: number;
  sessions: number;
  runs: number;
  /** When to stop waiting for its end (the object's clock). */
  forgetAt: number;
}

/** `counts` less `sessions` and `runs`, none below zero: an admission or a lease's unused part taken back. */
export function lessCounts(counts: Usage["counts"], sessions: number, runs: number): Usage["counts"] {
  const less = { ...counts };
  if (sessions > 0) less.sessions = Math.max(0, (less.sessions ?? 0) - sessions);
  if (runs > 0) less.runs = Math.max(0, (less.runs ?? 0) - runs);
  return less;
}

/** The hour's usage without the admissions open leases counted in it (not given out yet, as far as is known). */
export function usageLessLeases(hour: number, usage: Usage, leases: Iterable<OpenLease>): Usage {
  let sessions = 0;
  let runs = 0;
  for (const lease of leases)
    if (lease.hour === hour) {
      sessions += lease.sessions;
      runs += lease.runs;
    }
  return sessions || runs ? { ...usage, counts: lessCounts(usage.counts, sessions, runs) } : usage;
}

/** The window uses at `now` without the admissions open leases counted in them. */
export function windowsLessLeases<T extends Used>(now: number, use: T, leases: Iterable<OpenLease>): T {
  const today = hourOf(windowStart("day", now));
  const minute = Math.floor(now / MINUTE_MS);
  let sessions = 0;
  let runs = 0;
  for (const lease of leases) {
    if (lease.hour >= today && lease.hour <= hourOf(now)) sessions += lease.sessions;
    if (lease.minute === minute) runs += lease.runs;
  }
  return {
    ...use,
    sessions_today: Math.max(0, use.sessions_today - sessions),
    runs_this_minute: Math.max(0, use.runs_this_minute - runs),
  };
}

/** The windows' use with `ask` counted in it (the use a lease granted with it is measured against). */
export const withAsk = (used: Used, ask: Ask): Used => ({
  ...used,
  sessions_today: used.sessions_today + (ask.sessions ? 1 : 0),
  runs_this_minute: used.runs_this_minute + (ask.runs ? 1 : 0),
});
