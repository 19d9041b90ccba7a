import { collaborationEvent } from "../../src/audit/collaboration-events";
import type { AuditRecord } from "../../src/audit/record";
import { closeMessage, deadlineAction, deadlineChange, unblocksSender } from "../../src/collaboration/message-status";
import type { Env } from "../../src/env";
import { err, ok, type Result } from "../../src/errors";
import { agentRpc } from "../../src/rpc/stubs";
import { escalationInboxId } from "../../src/runtime/inbox";
import type { CollabMessage, EscalationResolve } from "../../src/schemas/collaboration";
import { TIMER_KEYS } from "../shared/timer-kinds";
import type { TimerOutcome, Timers } from "../shared/timers";
import type { CollaborationStore } from "./collaboration-store";

/** What the waits use of their object. */
export interface CollaborationKernel {
  env: Env;
  store: CollaborationStore;
  timers: Pick<Timers, "cancel">;
  now(): number;
  /** The change and its audit records in one transaction, then the outbox flush and the alarm. */
  commit(records: AuditRecord[], write: () => void): Promise<void>;
}

/**
 * What ends a message someone waits on, besides its answer: a person's reply to an
 * escalation, the deadlock detector breaking a wait, the deadline (a query's or an
 * escalation's timeout, another message's ttl). Each closes the message by the table in
 * src/collaboration/message-status.ts, with its audit records, and unblocks the sender.
 */
export class CollaborationWaits {
  constructor(private readonly k: CollaborationKernel) {}

  async resolveEscalation(messageId: string, args: EscalationResolve): Promise<Result<CollabMessage>> {
    const loaded = this.k.store.load();
    if (!loaded) return notFound();
    const escalation = this.k.store.message(messageId);
    if (escalation?.type !== "escalate")
      return err("NOT_FOUND", `No escalation '${messageId}' in this collaboration.`, { message_id: messageId });
    const by = args.by ?? "api";
    const answered = closeMessage(escalation, { event: "resolve", reply: args.reply, by });
    if (!answered)
      return err("INBOX_ITEM_CLOSED", `Escalation '${messageId}' is ${escalation.status}.`, {
        message_id: messageId,
        status: escalation.status,
      });
    const now = this.k.now();
    const next = { ...loaded.record, updated_at: new Date(now).toISOString() };
    const records = [
      collaborationEvent(
        loaded.tenant,
        next,
        "collaboration.escalation_resolved",
        { actor: by, actor_type: "user" },
        now,
        {
          message_id: messageId,
          from: escalation.from,
        },
      ),
      collaborationEvent(loaded.tenant, next, "inbox.item_resolved", { actor: by, actor_type: "user" }, now, {
        inbox_id: escalationInboxId(messageId, next.id),
        agent: escalation.from,
        outcome: "resolved",
        resolved_by: by,
      }),
    ];
    await this.k.commit(records, () => {
      this.k.store.saveRecord(next);
      this.k.store.update(answered);
      this.k.timers.cancel(TIMER_KEYS.collabMessage(messageId));
    });
    await agentRpc(this.k.env, loaded.tenant, escalation.from).unblock(messageId);
    return ok(answered);
  }

  async resolveWait(
    messageId: string,
    code: "DEADLOCK_RESOLVED",
    cycle: string[],
  ): Promise<Result<{ resolved: boolean }>> {
    const loaded = this.k.store.load();
    const query = loaded ? this.k.store.message(messageId) : null;
    const broken = query ? closeMessage(query, { event: "break_deadlock", code }) : null;
    if (!loaded || !query || !broken) return ok({ resolved: false });
    const now = this.k.now();
    const next = { ...loaded.record, updated_at: new Date(now).toISOString() };
    const record = collaborationEvent(
      loaded.tenant,
      next,
      "deadlock.resolved",
      { actor: "relay", actor_type: "system" },
      now,
      {
        message_id: messageId,
        waiter: query.from,
        waiting_for: query.to,
        cycle,
      },
    );
    await this.k.commit([record], () => {
      this.k.store.saveRecord(next);
      this.k.store.update(broken);
      this.k.timers.cancel(TIMER_KEYS.collabMessage(messageId));
    });
    await agentRpc(this.k.env, loaded.tenant, query.from).unblock(messageId);
    return ok({ resolved: true });
  }

  /** A message's ttl ran out unanswered (dropped), or a query's timeout (its sender is told QUERY_TIMEOUT). */
  async expire(messageId: string): Promise<TimerOutcome> {
    const loaded = this.k.store.load();
    const message = loaded ? this.k.store.message(messageId) : null;
    const closed = message ? closeMessage(message, deadlineChange(message)) : null;
    if (!loaded || !message || !closed) return { type: "done" };
    const now = this.k.now();
    const next = { ...loaded.record, updated_at: new Date(now).toISOString() };
    const records = [
      collaborationEvent(loaded.tenant, next, deadlineAction(message), { actor: "relay", actor_type: "system" }, now, {
        message_id: messageId,
        type: message.type,
        from: message.from,
        to: message.to,
      }),
    ];
    if (message.type === "escalate")
      records.push(
        collaborationEvent(loaded.tenant, next, "inbox.item_expired", { actor: "relay", actor_type: "system" }, now, {
          inbox_id: escalationInboxId(messageId, next.id),
          agent: message.from,
          outcome: "expired",
          resolved_by: null,
        }),
      );
    await this.k.commit(records, () => {
      this.k.store.saveRecord(next);
      this.k.store.update(closed);
    });
    if (unblocksSender(message)) await agentRpc(this.k.env, loaded.tenant, message.from).unblock(messageId);
    return { type: "done" };
  }
}

const notFound = () => err("COLLABORATION_NOT_FOUND", "No such collaboration.");
