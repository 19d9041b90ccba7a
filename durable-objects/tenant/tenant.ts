import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../src/env";
import { ok, type Result } from "../../src/errors";
import { type Ask, quotaExceeded, refusalOf } from "../../src/quotas/admission";
import {
  leaseOf,
  lessCounts,
  type OpenLease,
  usageLessLeases,
  windowsLessLeases,
  withAsk,
} from "../../src/quotas/lease";
import { effectiveLimits, limitsFromVars } from "../../src/quotas/limits";
import { DAY_MS, hourOf, MINUTE_MS, windowStart } from "../../src/quotas/windows";
import {
  type Admission,
  type EndedLease,
  type Granted,
  LEASE_END_GRACE_MS,
  MAX_RECENT_RUNS,
  RECENT_RUNS_MS,
  type RecentRun,
  type TenantLimits,
  type TenantRpc,
  type TenantUsage,
  type WindowUse,
} from "../../src/rpc/tenant";
import type { QuotaOverrides } from "../../src/schemas/quotas";
import { addUsage, emptyUsage, type Usage } from "../../src/usage/counts";
import { USAGE_RETENTION_DAYS } from "../../src/usage/report";
import { createSql, SchemaGate, type Sql } from "../shared/sql";
import { type HourRow, TENANT_MIGRATIONS, TENANT_SCHEMA, TenantStore } from "./tenant-store";

/**
 * One tenant's quotas and usage (docs/operations.md, Quotas and Usage). A session or a run is
 * admitted in one synchronous step — read the windows' use, decide (src/quotas), count — with
 * no await between the read and the write, so two admissions never pass a limit together and
 * a refusal writes nothing. Usage that isolates counted arrives at most once a second from each.
 * Admissions are counted here too: a session's or a run's count is its admission. It also
 * remembers the runs its sessions started in the last seconds, which D1 may not have yet.
 *
 * An admission may come with a lease: more admissions of its kind, counted with it, that the
 * asking isolate gives out itself for up to a second (src/quotas/lease.ts). The leases not yet
 * ended are kept in memory only, so that usage views leave out what was leased and not yet
 * given out; after a restart those show as used until their end arrives.
 */
export class TenantDO extends DurableObject<Env> implements TenantRpc {
  protected readonly sql: Sql;
  private readonly schema: SchemaGate;
  private readonly store: TenantStore;
  /** The day (since the epoch) usage was last pruned to USAGE_RETENTION_DAYS by this instance. */
  private prunedDay = -1;
  /** Leases granted and not yet ended, by id; forgotten LEASE_END_GRACE_MS after their end. */
  private readonly leases = new Map<string, OpenLease>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = createSql(ctx.storage);
    this.schema = new SchemaGate(ctx.storage, this.sql, TENANT_MIGRATIONS, TENANT_SCHEMA);
    this.store = new TenantStore(this.sql);
  }

  async admit(_tenant: string, ask: Ask, lease = 0): Promise<Result<Granted>> {
    this.schema.ensure();
    const now = this.now();
    const limits = this.currentLimits().limits;
    this.forgetLeases(now);
    return this.ctx.storage.transactionSync(() => {
      const hour = this.store.hour(hourOf(now)) ?? blankHour(hourOf(now));
      const used = this.windowUse(now, hour);
      const refusal = refusalOf(ask, limits, used, now);
      // Refused: nothing is written (the caller counts the refusal with its usage).
      if (refusal) return { ok: false as const, error: quotaExceeded(refusal) };
      const terms = lease > 0 ? leaseOf(ask, lease, limits, withAsk(used, ask), now) : null;
      // The lease's admissions are counted now, with the one asked: windows stay strict.
      const n = 1 + (terms?.count ?? 0);
      const minute = Math.floor(now / MINUTE_MS);
      const usage = emptyUsage();
      if (ask.sessions) usage.counts.sessions = n;
      if (ask.runs) usage.counts.runs = n;
      const runs = ask.runs ? (hour.run_minute === minute ? hour.minute_runs : 0) + n : null;
      this.count(runs === null ? hour : { ...hour, run_minute: minute, minute_runs: runs }, usage);
      const admission = { hour: hour.hour, minute, sessions: !!ask.sessions, runs: !!ask.runs };
      if (!terms) return ok(admission);
      const id = crypto.randomUUID();
      this.leases.set(id, {
        hour: hour.hour,
        minute,
        sessions: ask.sessions ? terms.count : 0,
        runs: ask.runs ? terms.count : 0,
        forgetAt: now + terms.ms + LEASE_END_GRACE_MS,
      });
      return ok({ ...admission, grant: { id, ...terms } });
    });
  }

  async release(_tenant: string, admission: Admission): Promise<Result<{ released: boolean }>> {
    if (!this.schema.ready()) return ok({ released: false });
    const released = this.takeBack(admission.hour, admission.minute, +admission.sessions, +admission.runs);
    return ok({ released });
  }

  async endLease(_tenant: string, lease: EndedLease): Promise<Result<{ ended: boolean }>> {
    this.leases.delete(lease.id);
    if (!this.schema.ready()) return ok({ ended: false });
    if (lease.sessions > 0 || lease.runs > 0) this.takeBack(lease.hour, lease.minute, lease.sessions, lease.runs);
    return ok({ ended: true });
  }

  async record(_tenant: string, hours: { hour: number; usage: Usage }[]): Promise<Result<TenantLimits>> {
    this.schema.ensure();
    this.ctx.storage.transactionSync(() => {
      for (const { hour, usage } of hours) this.count(this.store.hour(hour) ?? blankHour(hour), usage);
    });
    return ok(this.currentLimits());
  }

  async limits(_tenant: string): Promise<Result<TenantLimits>> {
    return ok(this.currentLimits());
  }

  async usage(
    _tenant: string,
    fromHour: number,
    toHour: number,
    storedFromHour = fromHour,
  ): Promise<Result<TenantUsage>> {
    const now = this.now();
    const limits = this.currentLimits();
    if (!this.schema.ready()) {
      const windows = { sessions_today: 0, runs_this_minute: 0, tokens_today: 0 };
      return ok({ ...limits, hours: [], windows, d1_bytes_since: 0, at: now });
    }
    this.forgetLeases(now);
    const hours = this.store
      .hours(fromHour, toHour)
      .map(({ hour, usage }) => ({ hour, usage: usageLessLeases(hour, usage, this.leases.values()) }));
    const windows = windowsLessLeases(
      now,
      this.windowUse(now, this.store.hour(hourOf(now)) ?? blankHour(hourOf(now))),
      this.leases.values(),
    );
    return ok({ ...limits, hours, windows, d1_bytes_since: this.store.bytesSince(storedFromHour), at: now });
  }

  async noteRun(_tenant: string, run: Omit<RecentRun, "at">): Promise<Result<{ noted: true }>> {
    this.schema.ensure();
    const now = this.now();
    this.ctx.storage.transactionSync(() => {
      this.store.noteRun({ ...run, at: now });
      // Kept as long as a list may need them: each note trims what is older.
      this.store.pruneRecentRuns(now - RECENT_RUNS_MS);
    });
    return ok({ noted: true });
  }

  async recentRuns(_tenant: string): Promise<Result<RecentRun[]>> {
    if (!this.schema.ready()) return ok([]);
    return ok(this.store.recentRuns(this.now() - RECENT_RUNS_MS, MAX_RECENT_RUNS));
  }

  async setOverrides(_tenant: string, overrides: QuotaOverrides | null): Promise<Result<TenantLimits>> {
    this.schema.ensure();
    this.store.setOverrides(overrides, this.now());
    return ok(this.currentLimits());
  }

  /** The object's clock. */
  protected now(): number {
    return Date.now();
  }

  private currentLimits(): TenantLimits {
    const defaults = limitsFromVars(this.env);
    const overrides = this.schema.ready() ? this.store.overrides() : {};
    return { ...effectiveLimits(defaults.limits, overrides), overrides, warnings: defaults.warnings };
  }

  /** The window limits' use at `now`; `current` is the row of now's hour. */
  private windowUse(now: number, current: HourRow): WindowUse {
    const day = this.store.sums(hourOf(windowStart("day", now)), current.hour);
    const minute = Math.floor(now / MINUTE_MS);
    return {
      sessions_today: day.sessions + (current.usage.counts.sessions ?? 0),
      runs_this_minute: current.run_minute === minute ? current.minute_runs : 0,
      tokens_today: day.tokens + (current.usage.counts.input_tokens ?? 0) + (current.usage.counts.output_tokens ?? 0),
    };
  }

  /** Takes `sessions` and `runs` back from the hour's row (and its minute's runs, if still that minute). */
  private takeBack(hour: number, minute: number, sessions: number, runs: number): boolean {
    return this.ctx.storage.transactionSync(() => {
      const row = this.store.hour(hour);
      if (!row) return false;
      const sameMinute = runs > 0 && row.run_minute === minute;
      this.store.save({
        ...row,
        usage: { ...row.usage, counts: lessCounts(row.usage.counts, sessions, runs) },
        minute_runs: sameMinute ? Math.max(0, row.minute_runs - runs) : row.minute_runs,
      });
      return true;
    });
  }

  /** Forgets the leases whose end never arrived: their admissions count as used from then on. */
  private forgetLeases(now: number): void {
    for (const [id, lease] of this.leases) if (lease.forgetAt <= now) this.leases.delete(id);
  }

  /** Adds `usage` to the hour's row and writes it; prunes old hours once a day. Inside a transaction. */
  private count(row: HourRow, usage: Usage): void {
    this.store.save({ ...row, usage: addUsage(structuredClone(row.usage), usage) });
    const day = Math.floor(this.now() / DAY_MS);
    if (day !== this.prunedDay) {
      this.store.prune(hourOf(this.now() - USAGE_RETENTION_DAYS * DAY_MS));
      this.prunedDay = day;
    }
  }
}

const blankHour = (hour: number): HourRow => ({ hour, usage: emptyUsage(), run_minute: 0, minute_runs: 0 });
