import { afterFailure, unreadableSubscriptionRetryAt } from "../../../src/audit/delivery-schedule";
import { deliver, deliveryBody } from "../../../src/audit/event-delivery";
import { auditEvent } from "../../../src/audit/events";
import { type AuditRecord, SYSTEM_ACTOR } from "../../../src/audit/record";
import { getSubscription } from "../../../src/registry/event-subscriptions";
import { DELIVERED_FAMILIES, subscribed } from "../../../src/schemas/events";
import { outboundPolicy } from "../../../src/services/outbound";
import { knownUnsubscribed } from "../../../src/services/registry-cache";
import type { TraceContext } from "../../../src/telemetry/trace-context";
import type { Sql } from "../../shared/sql";
import { TIMER_KEYS } from "../../shared/timer-kinds";
import type { TimerHandlers, TimerOutcome } from "../../shared/timers";
import { RunStore } from "../runs/run-store";
import { recordContexts } from "../runs/run-trace";
import type { SessionKernel } from "../session-kernel";
import type { SessionEndHook } from "../session-lifecycle";
import { DeliveryQueue } from "./delivery-store";

/**
 * Webhooks out (docs/webhooks.md): every handoff and run audit record is queued for the tenant's
 * events_url in the transaction that writes it, and the session's alarm delivers it —
 * at least once, under a stable webhook-id (the record's id), retried with backoff
 * (src/audit/delivery-schedule.ts), and recorded as `webhook.delivery_failed` when finally given up. A
 * tenant with no events_url has its queue dropped at the first delivery run. A deleted
 * session's storage waits for its queue. A record a run wrote goes out in the run's trace
 * (docs/observability.md, Propagation).
 */

/** Deliveries made per alarm run (the rest are due at once after it). */
const BATCH = 20;

export class SessionDeliveries {
  private readonly queue: DeliveryQueue;
  /** Read only, for the trace of a run's records. */
  private readonly runs: RunStore;

  constructor(
    private readonly k: Pick<SessionKernel, "env" | "now" | "outbox" | "tables" | "timers" | "transaction">,
    sql: Sql,
  ) {
    this.queue = new DeliveryQueue(sql, k.tables);
    this.runs = new RunStore(sql, undefined, k.tables);
  }

  /**
   * Inside the transaction that appends `records` to the outbox: queues the lifecycle ones,
   * unless the tenant is known (from the registry head this isolate read) to have no events_url.
   */
  onAudit(records: readonly AuditRecord[]): void {
    const lifecycle = records.filter((r) => DELIVERED_FAMILIES.some((family) => r.action.startsWith(family)));
    if (lifecycle.length === 0 || knownUnsubscribed(lifecycle[0]!.tenant)) return;
    const now = this.k.now();
    this.queue.add(lifecycle, now);
    this.k.timers.schedule("events.deliver", now, null, { key: TIMER_KEYS.deliver, ifExists: "earliest" });
  }

  timerHandlers(): TimerHandlers {
    return { "events.deliver": (_timer, now) => this.run(now) };
  }

  /** A deleted session's storage goes only once its notifications are delivered or given up. */
  endHook(): SessionEndHook {
    return {
      onEnd: (session) => session,
      settle: async () => {
        await this.run(this.k.now());
        return this.queue.nextAt() === null;
      },
    };
  }

  private async run(now: number): Promise<TimerOutcome> {
    const due = this.queue.due(now, BATCH);
    if (due.length > 0) {
      const tenant = due[0]!.record.tenant;
      const subscription = await getSubscription(this.k.env.DB, tenant).catch(() => undefined);
      if (subscription === undefined)
        return {
          type: "retry",
          at: unreadableSubscriptionRetryAt(now),
          error: "the events subscription could not be read",
        };
      if (subscription === null) {
        this.k.transaction(() => this.queue.clear());
        return { type: "done" };
      }
      const policy = outboundPolicy(this.k.env);
      const traceOf = this.tracer();
      const outcomes = await Promise.all(
        due.map(async (d) => ({
          d,
          outcome: subscribed(subscription.types, d.record.action)
            ? await deliver(subscription.url, subscription.secret, d.record.id, deliveryBody(d.record), policy, {
                trace: traceOf(d.record),
              })
            : null,
        })),
      );
      const failed: AuditRecord[] = [];
      this.k.transaction(() => {
        for (const { d, outcome } of outcomes) {
          if (outcome === null || outcome.ok) {
            this.queue.remove(d.record.id);
            continue;
          }
          const next = afterFailure(d.attempts, now);
          if (next.type === "retry") {
            this.queue.retryAt(d.record.id, next.attempts, next.at, outcome.error);
            continue;
          }
          this.queue.remove(d.record.id);
          failed.push(
            auditEvent(
              { tenant: d.record.tenant, session_id: d.record.session_id },
              {
                action: "webhook.delivery_failed",
                actor: SYSTEM_ACTOR,
                agent: d.record.agent,
                handoff_id: d.record.handoff_id,
                details: {
                  webhook_id: d.record.id,
                  type: d.record.action,
                  attempts: next.attempts,
                  last_error: outcome.error,
                  url: subscription.url,
                },
              },
              now,
            ),
          );
        }
        this.k.outbox.append(failed);
        if (failed.length > 0)
          this.k.timers.schedule("outbox.flush", now, null, { key: TIMER_KEYS.flush, ifExists: "keep" });
      });
    }
    const next = this.queue.nextAt();
    return next === null ? { type: "done" } : { type: "again", at: Math.max(next, now) };
  }

  /**
   * The trace a delivery of a record sends: its run's, when a run wrote it — a run's record
   * names the run, and a handoff's records belong to the run whose handoff tool call started
   * it — and none otherwise.
   */
  private tracer(): (record: AuditRecord) => TraceContext | undefined {
    const contextOf = recordContexts(this.runs);
    return (record) => {
      const runId =
        typeof record.details.run_id === "string"
          ? record.details.run_id
          : record.action.startsWith("handoff.") && record.handoff_id !== null
            ? this.queue.handoffRun(record.handoff_id)
            : null;
      return (runId === null ? null : contextOf(runId, record.id)) ?? undefined;
    };
  }
}
