import { DurableObject } from "cloudflare:workers";
import { collaborationEvent } from "../../src/audit/collaboration-events";
import { flushBackoffMs } from "../../src/audit/outbox-policy";
import type { AuditRecord } from "../../src/audit/record";
import { acceptMessage } from "../../src/collaboration/accept-message";
import { matchCapabilities } from "../../src/collaboration/capability-match";
import { closeMessage } from "../../src/collaboration/message-status";
import { capabilityMatchOf, senderWait } from "../../src/collaboration/messages";
import { movePhase } from "../../src/collaboration/phases";
import type { Env } from "../../src/env";
import { err, ok, type Result } from "../../src/errors";
import { ulid } from "../../src/lib/ulid";
import type { CollaborationRpc, SentMessage } from "../../src/rpc/collaboration";
import { agentRpc } from "../../src/rpc/stubs";
import type {
  CollabMessage,
  CollabMessageInput,
  Collaboration,
  CollaborationComplete,
  CollaborationCreate,
  EscalationResolve,
} from "../../src/schemas/collaboration";
import { flushAuditRecords } from "../../src/services/audit-writes";
import { agentDirectory } from "../../src/services/registry-cache";
import { Outbox } from "../shared/outbox";
import { createSql, SchemaGate, type Sql } from "../shared/sql";
import { TIMER_KEYS } from "../shared/timer-kinds";
import { type TimerOutcome, type TimerRow, Timers } from "../shared/timers";
import { COLLABORATION_MIGRATIONS, COLLABORATION_SCHEMA, CollaborationStore, type Stored } from "./collaboration-store";
import { CollaborationWaits } from "./collaboration-waits";

/**
 * One collaboration between agents: its participants, phase and negotiation,
 * and the message log in order. Load → pure rule (src/collaboration) → one transaction
 * (the change, its audit records) → effects (the sender's blocking status in its AgentDO,
 * timers). A query blocks its sender until the response, its timeout (alarm), a cancel, or
 * a deadlock broken at it; a blocking escalation, until a person answers or its timeout;
 * messages with a ttl are dropped by alarm when unanswered.
 */

export class CollaborationDO extends DurableObject<Env> implements CollaborationRpc {
  private readonly sql: Sql;
  private readonly schema: SchemaGate;
  private readonly store: CollaborationStore;
  private readonly outbox: Outbox;
  private readonly timers: Timers;
  private readonly waits: CollaborationWaits;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = createSql(ctx.storage);
    this.schema = new SchemaGate(ctx.storage, this.sql, COLLABORATION_MIGRATIONS, COLLABORATION_SCHEMA);
    this.store = new CollaborationStore(this.sql, this.schema);
    this.outbox = new Outbox(this.sql);
    this.timers = new Timers(ctx.storage, this.sql, () => this.now());
    this.waits = new CollaborationWaits({
      env,
      store: this.store,
      timers: this.timers,
      now: () => this.now(),
      commit: (records, write) => this.commit(records, write),
    });
  }

  async create(tenant: string, id: string, args: CollaborationCreate): Promise<Result<Collaboration>> {
    this.schema.ensure();
    const existing = this.store.load();
    if (existing) {
      // Creating it again joins whoever is not in it yet (a session's collaboration grows with its agents).
      const joining = [args.initiator, ...args.participants].filter((p) => !existing.record.participants.includes(p));
      if (joining.length === 0) return ok(this.store.view(existing.record));
      const now = this.now();
      const next: Stored = {
        ...existing.record,
        participants: [...existing.record.participants, ...new Set(joining)],
        updated_at: new Date(now).toISOString(),
      };
      await this.commit(
        [
          collaborationEvent(
            tenant,
            next,
            "collaboration.joined",
            { actor: args.initiator, actor_type: "agent" },
            now,
            {
              joined: [...new Set(joining)],
            },
          ),
        ],
        () => this.store.saveRecord(next),
      );
      return ok(this.store.view(next));
    }
    const now = this.now();
    const at = new Date(now).toISOString();
    const participants = [args.initiator, ...args.participants.filter((p) => p !== args.initiator)];
    const record: Stored = {
      id,
      phase: "discovery",
      initiator: args.initiator,
      participants: [...new Set(participants)],
      context: args.context,
      proposal_id: null,
      terms: null,
      outcome: null,
      created_at: at,
      updated_at: at,
    };
    await this.commit(
      [
        collaborationEvent(
          tenant,
          record,
          "collaboration.created",
          { actor: args.initiator, actor_type: "agent" },
          now,
          {
            participants: record.participants,
          },
        ),
      ],
      () => {
        this.store.create(tenant, record);
      },
    );
    return ok(this.store.view(record));
  }

  async get(): Promise<Result<Collaboration>> {
    const loaded = this.store.load();
    return loaded ? ok(this.store.view(loaded.record)) : notFound();
  }

  async send(input: CollabMessageInput): Promise<Result<SentMessage>> {
    const loaded = this.store.load();
    if (!loaded) return notFound();
    const { tenant, record } = loaded;
    const now = this.now();
    const id = `cmsg_${ulid(now).toLowerCase()}`;
    const accepted = acceptMessage(input, {
      tenant,
      record,
      answered: input.correlation_id === undefined ? null : this.store.message(input.correlation_id),
      proposals: () =>
        new Map(
          this.store
            .messages()
            .filter((m) => m.type === "negotiate")
            .map((m) => [m.id, m.payload]),
        ),
      id,
      now,
    });
    if (!accepted.ok) return accepted;
    const { next, message, closes, records } = accepted.value;
    await this.commit(records, () => {
      this.store.saveRecord(next);
      message.seq = this.store.insert(message);
      if (message.expires_at !== null)
        this.timers.schedule(
          "collab.expire",
          Date.parse(message.expires_at),
          { message_id: id },
          { key: TIMER_KEYS.collabMessage(id) },
        );
      if (closes) {
        this.store.update(closeMessage(closes, { event: input.type === "cancel" ? "cancel" : "respond", by: id })!);
        this.timers.cancel(TIMER_KEYS.collabMessage(closes.id));
      }
    });
    return ok(await this.afterSend(tenant, record, input, id, closes));
  }

  /**
   * A sent message's effects: a query, or a blocking escalation, holds its sender until it is
   * answered; the query it answers releases its sender; a broadcast's capability match is
   * resolved against the registry.
   */
  private async afterSend(
    tenant: string,
    record: Pick<Stored, "id" | "participants">,
    input: CollabMessageInput,
    id: string,
    closes: CollabMessage | null,
  ): Promise<SentMessage> {
    const wait = senderWait(input);
    if (wait)
      await agentRpc(this.env, tenant, input.from).blockOn({
        tenant,
        self: input.from,
        ...wait,
        message_id: id,
        collaboration_id: record.id,
      });
    if (closes) await agentRpc(this.env, tenant, closes.from).unblock(closes.id);
    const sent: SentMessage = { message: this.store.message(id)! };
    const match = input.type === "broadcast" ? capabilityMatchOf(input.payload) : null;
    if (match) {
      const directory = await agentDirectory(this.env.DB, tenant);
      const agents = record.participants
        .filter((p) => p !== input.from)
        .flatMap((p) => (directory.byName.has(p) ? [directory.byName.get(p)!] : []));
      sent.matches = matchCapabilities(agents, match.capabilities, match.options);
    }
    return sent;
  }

  async complete(args: CollaborationComplete): Promise<Result<Collaboration>> {
    const loaded = this.store.load();
    if (!loaded) return notFound();
    const { tenant, record } = loaded;
    const moved = movePhase(record.phase, "complete");
    if (!moved.ok)
      return err("INVALID_TRANSITION", `A collaboration in the ${record.phase} phase cannot be completed.`, {
        phase: record.phase,
        allowed: moved.allowed,
      });
    const now = this.now();
    const next: Stored = {
      ...record,
      phase: moved.phase,
      outcome: args.outcome,
      ...(args.result === undefined ? {} : { result: args.result }),
      updated_at: new Date(now).toISOString(),
    };
    await this.commit(
      [
        collaborationEvent(tenant, next, "collaboration.completed", { actor: "api", actor_type: "user" }, now, {
          outcome: args.outcome,
          from: record.phase,
        }),
      ],
      () => this.store.saveRecord(next),
    );
    return ok(this.store.view(next));
  }

  resolveEscalation(messageId: string, args: EscalationResolve): Promise<Result<CollabMessage>> {
    return this.waits.resolveEscalation(messageId, args);
  }

  resolveWait(messageId: string, code: "DEADLOCK_RESOLVED", cycle: string[]): Promise<Result<{ resolved: boolean }>> {
    return this.waits.resolveWait(messageId, code, cycle);
  }

  override async alarm(): Promise<void> {
    try {
      if (!this.schema.ready()) return;
      await this.timers.run({
        "collab.expire": (timer) => this.waits.expire(timer.payload.message_id),
        "outbox.flush": (timer, now) => this.flush(timer, now),
      });
    } catch (error) {
      // Never throw from an alarm: the platform drops it after six retries.
      console.error("CollaborationDO alarm failed; re-arming", error);
      this.timers.forget();
      await this.ctx.storage.setAlarm(this.now() + 30_000).catch(() => undefined);
    }
  }

  private async flush(timer: TimerRow, now: number): Promise<TimerOutcome> {
    try {
      const { remaining } = await this.outbox.flush((r) => flushAuditRecords(this.env, r));
      // Parked, not deleted: the next commit's schedule rewrites it in place (two rows a flush, not four).
      return remaining > 0 ? { type: "again", at: this.now() } : { type: "park" };
    } catch (error) {
      return { type: "retry", at: now + flushBackoffMs(timer.attempts + 1), error: String(error) };
    }
  }

  /** The object's clock. */
  protected now(): number {
    return Date.now();
  }

  /** The change and its audit records in one transaction, then the outbox flush and the alarm. */
  private async commit(records: AuditRecord[], write: () => void): Promise<void> {
    try {
      this.ctx.storage.transactionSync(() => {
        write();
        this.outbox.append(records);
        this.timers.schedule("outbox.flush", this.now(), null, { key: TIMER_KEYS.flush, ifExists: "keep" });
      });
    } catch (error) {
      this.timers.forget();
      throw error;
    }
    await this.timers.arm();
  }
}

const notFound = () => err("COLLABORATION_NOT_FOUND", "No such collaboration.");
