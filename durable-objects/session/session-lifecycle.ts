import * as events from "../../src/audit/events";
import { flushBackoffMs, nextFlushAt } from "../../src/audit/outbox-policy";
import { type Actor, API_ACTOR, type AuditRecord, SYSTEM_ACTOR } from "../../src/audit/record";
import { ok, type Result } from "../../src/errors";
import { ulid } from "../../src/lib/ulid";
import type { SessionCreateArgs } from "../../src/rpc/session";
import { routeTraceEvent } from "../../src/runtime/run-record";
import type { SessionView } from "../../src/schemas/session";
import { flushAuditRecords } from "../../src/services/audit-writes";
import { writeDatabase } from "../../src/services/tenant-shards";
import { end, isIdleExpired, newSession, type SessionRecord, summarize, toHistoryItem } from "../../src/sessions/model";
import { writeSessionSummary } from "../../src/sessions/summary-store";
import type { SchemaGate } from "../shared/sql";
import { TIMER_KEYS } from "../shared/timer-kinds";
import type { TimerHandlers, TimerOutcome, TimerRow } from "../shared/timers";
import type { SessionHandoffs } from "./handoffs/session-handoffs";
import type { RunStore } from "./runs/run-store";
import { auditScope, type SessionKernel } from "./session-kernel";
import type { SessionTriggers } from "./triggers/session-triggers";

/**
 * The session's own timers: draining the audit outbox to D1, idle expiry, and the purge
 * of a deleted session. D1 failures become retries with the outbox backoff, forever:
 * a record is never dropped and storage is never wiped before its audit is in D1.
 * Features close what they keep open through a `SessionEndHook`.
 */

/** What a feature does when its session ends (expires or is deleted). */
export interface SessionEndHook {
  /**
   * Inside the transaction that ends the session, before its record: close what is open
   * (rows, timers, audit records of its own) and return the session with its changes.
   */
  onEnd(session: SessionRecord, now: number, reason: string): SessionRecord;
  /** After that transaction, before the storage is wiped: the I/O it left. True when nothing is left. */
  settle(): Promise<boolean>;
}

/**
 * A session's beginning and end: creating it (with its first agent's lease, its routing
 * decision and first message), deleting it, and the timers that expire, purge and flush it.
 */
export class SessionLifecycle {
  constructor(
    private readonly k: Pick<
      SessionKernel,
      "commit" | "destroy" | "env" | "live" | "now" | "outbox" | "store" | "timers" | "transaction" | "view"
    >,
    private readonly schema: Pick<SchemaGate, "ensure">,
    private readonly handoffs: Pick<SessionHandoffs, "leases" | "store" | "settleOrSweep">,
    private readonly runs: Pick<RunStore, "addEvents">,
    private readonly triggers: Pick<SessionTriggers, "arm">,
    private readonly hooks: readonly SessionEndHook[],
  ) {}

  /** Creates the session; creating it again returns the same session (the id is the idempotency key). */
  async create(
    tenant: string,
    id: string,
    args: SessionCreateArgs,
    actor: Actor = API_ACTOR,
  ): Promise<Result<SessionView>> {
    if (this.schema.ensure()) {
      // Made just now by this instance: nothing to read back before the first write.
      this.k.store.startEmpty();
      this.k.timers.startEmpty();
    } else if (this.k.store.load()) return this.current();
    // The first agent's capacity lease (when it has a limit), tentative until the session is committed.
    const lease = await this.handoffs.leases.leaseForNewSession(tenant, id, args.agent, args.capacity);
    if (!lease.ok) return lease;
    if (this.k.store.load()) return this.current();
    const now = this.k.now();
    const session = newSession({ id, tenant, agent: args.agent, metadata: args.metadata, ttl_s: args.ttl_s }, now);
    const scope = auditScope(session);
    const records: AuditRecord[] = [];
    if (args.route) records.push(events.routeDecided(scope, now, args.route));
    records.push(
      events.sessionCreated(scope, actor, now, {
        agent: args.agent,
        ttl_s: args.ttl_s,
        metadata: args.metadata,
        routed: !!args.route,
      }),
    );
    await this.k.commit(session, records, () => {
      if (lease.value) this.handoffs.store.setSessionLease(lease.value);
      if (args.route) this.runs.addEvents([routeTraceEvent(id, args.agent, now, args.route)]);
      if (args.input === undefined) return;
      const item = toHistoryItem({ role: "user", content: args.input }, session.current_agent, `msg_${ulid(now)}`, now);
      const seq = this.k.store.appendMessage(item, now);
      const added = events.messageAdded(scope, actor, now, session.current_agent, {
        message_id: item.id,
        seq,
        role: "user",
        author: null,
        chars: args.input.length,
      });
      this.k.outbox.append([added]);
    });
    await this.handoffs.settleOrSweep();
    await this.triggers.arm();
    return ok(this.k.view(session));
  }

  /**
   * Deletes the session: it is gone for callers at once; its storage is wiped once the
   * `session.deleted` record (and every earlier one) has reached D1.
   */
  async delete(actor: Actor = API_ACTOR): Promise<Result<{ deleted: true }>> {
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    const now = this.k.now();
    const session = end(loaded.value, "deleted", now);
    const closed = closeFeatures(this.hooks, session, now, "session deleted");
    await this.k.commit(
      closed,
      [events.sessionDeleted(auditScope(session), actor, now, { agent: session.current_agent })],
      () => {
        this.k.timers.cancel(TIMER_KEYS.expire);
        this.k.timers.schedule("session.purge", now, null, { key: TIMER_KEYS.purge });
      },
    );
    // Best effort now; the purge timer repeats it before the storage goes.
    await settleFeatures(this.hooks);
    return ok({ deleted: true });
  }

  timerHandlers(): TimerHandlers {
    return {
      "outbox.flush": (timer, now) => flushOutbox(this.k, timer, now),
      "session.expire": (timer, now) => expire(this.k, this.hooks, timer, now),
      "session.purge": (timer, now) => purge(this.k, this.hooks, timer, now),
    };
  }

  /** The session as it is (or why it is gone). */
  private current(): Result<SessionView> {
    const loaded = this.k.live();
    return loaded.ok ? ok(this.k.view(loaded.value)) : loaded;
  }
}

/** The session with every feature's `onEnd` applied: call inside the ending transaction. */
export function closeFeatures(
  hooks: readonly SessionEndHook[],
  session: SessionRecord,
  now: number,
  reason: string,
): SessionRecord {
  return hooks.reduce((s, hook) => hook.onEnd(s, now, reason), session);
}

/** Every feature's `settle`; true when all are done. */
export async function settleFeatures(hooks: readonly SessionEndHook[]): Promise<boolean> {
  const results = await Promise.all(hooks.map((hook) => hook.settle()));
  return results.every(Boolean);
}

const retry = (timer: TimerRow, now: number, error: unknown): TimerOutcome => ({
  type: "retry",
  at: now + flushBackoffMs(timer.attempts + 1),
  error: String(error),
});

/** The session's history length, for the sessions index's message count (a run's messages have no record each). */
function historyLengths(k: Pick<SessionKernel, "store">): ReadonlyMap<string, number> {
  const session = k.store.load();
  return session ? new Map([[session.id, k.store.historyLength()]]) : new Map();
}

async function flushOutbox(
  k: Pick<
    SessionKernel,
    "commit" | "destroy" | "env" | "live" | "now" | "outbox" | "store" | "timers" | "transaction" | "view"
  >,
  timer: TimerRow,
  now: number,
): Promise<TimerOutcome> {
  try {
    const { remaining } = await k.outbox.flush((records) => flushAuditRecords(k.env, records, historyLengths(k)));
    // Parked, not deleted: the next record's schedule rewrites it in place.
    return remaining > 0 ? { type: "again", at: nextFlushAt(k.now()) } : { type: "park" };
  } catch (error) {
    return retry(timer, now, error);
  }
}

async function expire(
  k: Pick<
    SessionKernel,
    "commit" | "destroy" | "env" | "live" | "now" | "outbox" | "store" | "timers" | "transaction" | "view"
  >,
  hooks: readonly SessionEndHook[],
  timer: TimerRow,
  now: number,
): Promise<TimerOutcome> {
  const session = k.store.load();
  if (!session || session.status === "deleted") return { type: "done" };
  if (session.status === "active") {
    // A change since the timer was set moved the deadline (and the timer with it).
    if (!isIdleExpired(session, now)) return { type: "again", at: session.expires_at };
    // Not the kernel's commit: it would re-arm the very expiry timer that is running.
    k.transaction(() => {
      const closed = closeFeatures(hooks, end(session, "expired", now), now, "session expired");
      k.store.save(closed);
      k.outbox.append([
        events.sessionExpired(auditScope(closed), SYSTEM_ACTOR, now, {
          agent: closed.current_agent,
          expires_at: new Date(session.expires_at).toISOString(),
          idle_s: Math.round((now - session.updated_at) / 1000),
        }),
      ]);
    });
  }
  if (!(await settleFeatures(hooks))) return retry(timer, now, "a feature could not close after the session expired");
  return finalize(k, timer, now, true);
}

async function purge(
  k: Pick<
    SessionKernel,
    "commit" | "destroy" | "env" | "live" | "now" | "outbox" | "store" | "timers" | "transaction" | "view"
  >,
  hooks: readonly SessionEndHook[],
  timer: TimerRow,
  now: number,
): Promise<TimerOutcome> {
  if (!(await settleFeatures(hooks)))
    return retry(timer, now, "a feature could not close after the session was deleted");
  return finalize(k, timer, now, false);
}

/**
 * The end of an expired or deleted session: every audit record to D1 (and, for an expiry,
 * the summary that is also its tombstone), then the storage goes.
 */
async function finalize(
  k: Pick<
    SessionKernel,
    "commit" | "destroy" | "env" | "live" | "now" | "outbox" | "store" | "timers" | "transaction" | "view"
  >,
  timer: TimerRow,
  now: number,
  archive: boolean,
): Promise<TimerOutcome> {
  const session = k.store.load();
  if (!session) return { type: "done" };
  try {
    const { remaining } = await k.outbox.flush((records) => flushAuditRecords(k.env, records, historyLengths(k)));
    if (remaining > 0) return { type: "again", at: k.now() };
    if (archive)
      await writeSessionSummary(
        await writeDatabase(k.env, session.tenant),
        summarize(session, k.store.historyLength(), k.store.agentStatus()),
      );
  } catch (error) {
    return retry(timer, now, error);
  }
  await k.destroy();
  return { type: "destroyed" };
}
