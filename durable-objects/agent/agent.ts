import { DurableObject } from "cloudflare:workers";
import type { Probe } from "../../src/collaboration/deadlock";
import type { Env } from "../../src/env";
import { err, ok, type Result } from "../../src/errors";
import { ulid } from "../../src/lib/ulid";
import type { AgentLoad, AgentRpc, AgentStatus, Lease, LeaseRef, WaitStart } from "../../src/rpc/agent";
import type { BlockingStatus } from "../../src/schemas/collaboration";
import { createSql, SchemaGate, type Sql } from "../shared/sql";
import { TIMER_KEYS } from "../shared/timer-kinds";
import { type TimerOutcome, type TimerPayloadRow, Timers } from "../shared/timers";
import { AGENT_MIGRATIONS, AGENT_SCHEMA } from "./agent-schema";
import { AgentWaits, NOT_BLOCKED } from "./agent-waits";

/**
 * One agent of one tenant: whether it takes sessions (active|paused) and its capacity
 * leases. A lease is taken tentatively before a handoff switches sessions and confirmed
 * after; a tentative lease that is never confirmed expires by timer, so a crash in the
 * middle of a handoff never leaves capacity taken. Every check-and-set is synchronous
 * SQL with no await between the read and the write (other calls interleave at awaits).
 */

interface LeaseRow {
  lease_id: string;
  session_id: string;
  handoff_id: string;
  state: Lease["state"];
  fencing_token: number;
  created_at: number;
  expires_at: number | null;
}

/** The lease's own columns of a row read with extra ones. */
const leaseRow = (row: LeaseRow): LeaseRow => ({
  lease_id: row.lease_id,
  session_id: row.session_id,
  handoff_id: row.handoff_id,
  state: row.state,
  fencing_token: row.fencing_token,
  created_at: row.created_at,
  expires_at: row.expires_at,
});

const toLease = (row: LeaseRow): Lease => ({
  ...row,
  created_at: new Date(row.created_at).toISOString(),
  expires_at: row.expires_at === null ? null : new Date(row.expires_at).toISOString(),
});

const unavailable = (reason: string, message: string, details: Record<string, unknown> = {}) =>
  err("AGENT_UNAVAILABLE", message, { reason, ...details });

const leaseTimerKey = TIMER_KEYS.lease;

export class AgentDO extends DurableObject<Env> implements AgentRpc {
  private readonly sql: Sql;
  private readonly timers: Timers;
  private readonly schema: SchemaGate;
  private readonly waits: AgentWaits;
  /**
   * No tentative lease lapses before this time (Infinity: none is tentative); undefined
   * when unknown (a new instance, a failed transaction), which makes the next call sweep.
   */
  private nextLapse: number | undefined = undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = createSql(ctx.storage);
    this.schema = new SchemaGate(ctx.storage, this.sql, AGENT_MIGRATIONS, AGENT_SCHEMA);
    this.timers = new Timers(ctx.storage, this.sql, () => this.now());
    this.waits = new AgentWaits(env, this.sql, this.timers, () => this.now());
  }

  /**
   * Takes a tentative lease for a session's handoff, lapsing after `ttl_ms` unless
   * confirmed. The same session and handoff get the same lease back; a session that holds
   * a lease here already keeps it (a new handoff id takes it over with a new token).
   */
  async acquire(sessionId: string, handoffId: string, ttlMs: number, capacity: number): Promise<Result<Lease>> {
    if (!(ttlMs > 0) || !Number.isInteger(capacity) || capacity < 1) {
      return err("VALIDATION_FAILED", "ttl_ms must be positive and capacity a positive integer.", {
        ttl_ms: ttlMs,
        capacity,
      });
    }
    this.schema.ensure();
    const now = this.now();
    const result = this.transaction((): Result<Lease> => {
      this.dropLapsed(now);
      // The agent row (made on first use) with this capacity, and its status, in one statement.
      const agent = this.sql<{
        status: AgentStatus;
      }>`INSERT INTO agent (id, status, max_concurrent_sessions, updated_at)
        VALUES (1, 'active', ${capacity}, ${now})
        ON CONFLICT (id) DO UPDATE SET max_concurrent_sessions = excluded.max_concurrent_sessions, updated_at = excluded.updated_at
        RETURNING status`[0];
      if (!agent) throw new Error("agent row missing");
      // The session's lease here (if any) and the number of leases, in one statement.
      const found = this.sql<Partial<LeaseRow> & { active: number }>`SELECT (SELECT COUNT(*) FROM leases) AS active, l.*
        FROM (SELECT 1) LEFT JOIN leases l ON l.session_id = ${sessionId}`[0];
      const existing = found?.lease_id ? (found as LeaseRow & { active: number }) : undefined;
      if (existing?.handoff_id === handoffId) return ok(toLease(leaseRow(existing)));
      if (existing) {
        const token = this.nextToken();
        const expires = existing.state === "tentative" ? now + ttlMs : null;
        this.sql`UPDATE leases SET handoff_id = ${handoffId}, fencing_token = ${token}, expires_at = ${expires}
                 WHERE lease_id = ${existing.lease_id}`;
        if (expires !== null) {
          this.timers.schedule(
            "lease.expire",
            expires,
            { lease_id: existing.lease_id },
            { key: leaseTimerKey(existing.lease_id) },
          );
          this.lapsesAt(expires);
        }
        return ok(toLease({ ...leaseRow(existing), handoff_id: handoffId, fencing_token: token, expires_at: expires }));
      }
      if (agent.status === "paused") return unavailable("paused", "The agent is paused.");
      const active = found?.active ?? 0;
      if (active >= capacity) {
        return unavailable("at_capacity", `The agent is at its capacity of ${capacity} sessions.`, {
          active,
          capacity,
        });
      }
      const lease: LeaseRow = {
        lease_id: `lse_${ulid(now)}`,
        session_id: sessionId,
        handoff_id: handoffId,
        state: "tentative",
        fencing_token: this.nextToken(),
        created_at: now,
        expires_at: now + ttlMs,
      };
      this.sql`INSERT INTO leases (lease_id, session_id, handoff_id, state, fencing_token, created_at, expires_at)
               VALUES (${lease.lease_id}, ${lease.session_id}, ${lease.handoff_id}, ${lease.state}, ${lease.fencing_token},
                       ${lease.created_at}, ${lease.expires_at})`;
      // A new lease's key is new: `keep` inserts it without the replace path's bookkeeping.
      this.timers.schedule(
        "lease.expire",
        now + ttlMs,
        { lease_id: lease.lease_id },
        { key: leaseTimerKey(lease.lease_id), ifExists: "keep" },
      );
      this.lapsesAt(now + ttlMs);
      return ok(toLease(lease));
    });
    await this.timers.arm();
    return result;
  }

  /**
   * Turns a tentative lease into a held one (idempotent). Refused when the lease lapsed or
   * was released, or when `fencingToken` is given and is not the lease's current one.
   */
  async confirm(leaseId: string, fencingToken?: number): Promise<Result<Lease>> {
    if (!this.schema.ready())
      return unavailable("lease_not_found", "No such lease: it lapsed or was released.", { lease_id: leaseId });
    const now = this.now();
    const token = fencingToken ?? null;
    const result = this.transaction((): Result<Lease> => {
      this.dropLapsed(now);
      // The common case in one statement: a tentative lease with the right token.
      const confirmed = this.sql<LeaseRow>`UPDATE leases SET state = 'held', expires_at = NULL
        WHERE lease_id = ${leaseId} AND state = 'tentative' AND (${token} IS NULL OR fencing_token = ${token}) RETURNING *`[0];
      if (confirmed) {
        this.timers.cancel(leaseTimerKey(leaseId));
        return ok(toLease(confirmed));
      }
      const lease = this.sql<LeaseRow>`SELECT * FROM leases WHERE lease_id = ${leaseId}`[0];
      if (!lease)
        return unavailable("lease_not_found", "No such lease: it lapsed or was released.", { lease_id: leaseId });
      if (fencingToken !== undefined && fencingToken !== lease.fencing_token) {
        return unavailable("stale_fencing_token", "The lease was taken over by a later grant.", {
          lease_id: leaseId,
          fencing_token: fencingToken,
          current_token: lease.fencing_token,
        });
      }
      return ok(toLease(lease));
    });
    await this.timers.arm();
    return result;
  }

  /**
   * Releases a lease, or the lease a session holds here. Idempotent: releasing what is not
   * there is `released: false`. With a fencing token, a lease granted since is left alone.
   */
  async release(ref: LeaseRef, fencingToken?: number): Promise<Result<{ released: boolean }>> {
    if (!this.schema.ready()) return ok({ released: false });
    const token = fencingToken ?? null;
    const result = this.transaction(() => {
      // A held lease has no timer (confirming cancelled it): only a tentative one's goes.
      const deleted =
        "lease_id" in ref
          ? this.sql<{ lease_id: string; state: Lease["state"] }>`DELETE FROM leases
              WHERE lease_id = ${ref.lease_id} AND (${token} IS NULL OR fencing_token = ${token}) RETURNING lease_id, state`[0]
          : this.sql<{ lease_id: string; state: Lease["state"] }>`DELETE FROM leases
              WHERE session_id = ${ref.session_id} AND (${token} IS NULL OR fencing_token = ${token}) RETURNING lease_id, state`[0];
      if (!deleted) return { released: false };
      if (deleted.state === "tentative") this.timers.cancel(leaseTimerKey(deleted.lease_id));
      return { released: true };
    });
    await this.timers.arm();
    return ok(result);
  }

  async load(): Promise<Result<AgentLoad>> {
    if (!this.schema.ready())
      return ok({ status: "active", max_concurrent_sessions: null, active_leases: 0, leases: [] });
    const now = this.now();
    const agent = this.agentRow(now);
    const leases = this
      .sql<LeaseRow>`SELECT * FROM leases WHERE state = 'held' OR expires_at > ${now} ORDER BY created_at, lease_id`;
    return ok({
      status: agent.status,
      max_concurrent_sessions: agent.max_concurrent_sessions,
      active_leases: leases.length,
      leases: leases.map(toLease),
    });
  }

  /** A paused agent keeps its leases and takes no new ones. */
  async pause(): Promise<Result<AgentLoad>> {
    return this.setStatus("paused");
  }

  async resume(): Promise<Result<AgentLoad>> {
    return this.setStatus("active");
  }

  // ── Waits (agent-waits.ts) ────────────────────────────────

  async blockOn(wait: WaitStart): Promise<Result<BlockingStatus>> {
    this.schema.ensure();
    return this.waits.blockOn(wait);
  }

  async unblock(messageId: string): Promise<Result<BlockingStatus>> {
    if (!this.schema.ready()) return ok(NOT_BLOCKED);
    return this.waits.unblock(messageId);
  }

  async blocking(): Promise<Result<BlockingStatus>> {
    return ok(this.schema.ready() ? this.waits.status() : NOT_BLOCKED);
  }

  async probe(tenant: string, self: string, probe: Probe): Promise<Result<{ cycle: string[] | null }>> {
    this.schema.ensure();
    return this.waits.probe(tenant, self, probe);
  }

  async breakWait(messageId: string, cycle: string[]): Promise<Result<{ broken: boolean }>> {
    if (!this.schema.ready()) return ok({ broken: false });
    return this.waits.breakWait(messageId, cycle);
  }

  override async alarm(): Promise<void> {
    try {
      if (!this.schema.ready()) return;
      await this.timers.run({
        "lease.expire": (timer, now) => this.expireLease(timer, now),
        "deadlock.probe": (_timer, now) => this.waits.onTimer(now),
      });
    } catch (error) {
      // Never throw from an alarm: the platform drops it after six retries.
      console.error("AgentDO alarm failed; re-arming", error);
      this.timers.forget();
      await this.ctx.storage.setAlarm(this.now() + 30_000).catch(() => undefined);
    }
  }

  private expireLease(timer: TimerPayloadRow<"lease.expire">, now: number): TimerOutcome {
    this
      .sql`DELETE FROM leases WHERE lease_id = ${timer.payload.lease_id} AND state = 'tentative' AND expires_at <= ${now}`;
    return { type: "done" };
  }

  /** The object's clock. */
  protected now(): number {
    return Date.now();
  }

  private async setStatus(status: AgentStatus): Promise<Result<AgentLoad>> {
    this.schema.ensure();
    const now = this.now();
    this.agentRow(now);
    this.sql`UPDATE agent SET status = ${status}, updated_at = ${now} WHERE id = 1`;
    return this.load();
  }

  /**
   * Tentative leases past their expiry no longer count, even before their timer runs.
   * Skipped while no tentative lease can have lapsed (`nextLapse`).
   */
  private dropLapsed(now: number): void {
    if (this.nextLapse !== undefined && now < this.nextLapse) return;
    for (const { lease_id } of this.sql<{
      lease_id: string;
    }>`DELETE FROM leases WHERE state = 'tentative' AND expires_at <= ${now} RETURNING lease_id`) {
      this.timers.cancel(leaseTimerKey(lease_id));
    }
    this.nextLapse =
      this.sql<{ at: number | null }>`SELECT MIN(expires_at) AS at FROM leases WHERE state = 'tentative'`[0]?.at ??
      Infinity;
  }

  /** A tentative lease now lapses at `at`. */
  private lapsesAt(at: number): void {
    if (this.nextLapse !== undefined) this.nextLapse = Math.min(this.nextLapse, at);
  }

  /** `transactionSync`; a throw (rolled back) makes what this instance knows about its tables unknown. */
  private transaction<T>(fn: () => T): T {
    try {
      return this.ctx.storage.transactionSync(fn);
    } catch (error) {
      this.nextLapse = undefined;
      this.timers.forget();
      throw error;
    }
  }

  private nextToken(): number {
    const row = this.sql<{
      fencing_counter: number;
    }>`UPDATE agent SET fencing_counter = fencing_counter + 1 WHERE id = 1 RETURNING fencing_counter`[0];
    if (!row) throw new Error("agent row missing");
    return row.fencing_counter;
  }

  private agentRow(now: number): { status: AgentStatus; max_concurrent_sessions: number | null } {
    this.sql`INSERT INTO agent (id, status, updated_at) VALUES (1, 'active', ${now}) ON CONFLICT (id) DO NOTHING`;
    const row = this.sql<{
      status: AgentStatus;
      max_concurrent_sessions: number | null;
    }>`SELECT status, max_concurrent_sessions FROM agent WHERE id = 1`[0];
    if (!row) throw new Error("agent row missing");
    return row;
  }
}
