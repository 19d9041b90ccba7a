import { DurableObject } from "cloudflare:workers";
import { writeAuditBatch } from "../../src/audit/d1-store";
import { auditEvent } from "../../src/audit/events";
import { flushBackoffMs } from "../../src/audit/outbox-policy";
import type { Actor, AuditRecord } from "../../src/audit/record";
import { matchCapabilities } from "../../src/collaboration/capability-match";
import {
  closeMessage,
  deadlineAction,
  deadlineChange,
  INITIAL_MESSAGE_STATUS,
  isOpen,
  unblocksSender,
} from "../../src/collaboration/message-status";
import { movePhase, type NegotiationState, negotiated, phaseEvent } from "../../src/collaboration/phases";
import type { Env } from "../../src/env";
import { err, ok, type Result } from "../../src/errors";
import { ulid } from "../../src/lib/ulid";
import type { CollaborationRpc, SentMessage } from "../../src/rpc/collaboration";
import { agentRpc } from "../../src/rpc/stubs";
import { escalationInboxId } from "../../src/runtime/inbox";
import {
  CollabMessage,
  type CollabMessageInput,
  Collaboration,
  type CollaborationComplete,
  type CollaborationCreate,
  DEFAULT_ESCALATION_TIMEOUT_S,
  type EscalationResolve,
  REPLY_TYPES,
} from "../../src/schemas/collaboration";
import { agentDirectory } from "../../src/services/registry-cache";
import { OUTBOX_DDL, Outbox } from "../shared/outbox";
import { createSql, SchemaGate, type SchemaMigration, type Sql } from "../shared/sql";
import { TIMER_KEYS } from "../shared/timer-kinds";
import { TIMERS_DDL, type TimerOutcome, type TimerRow, Timers } from "../shared/timers";

/**
 * One collaboration between agents (design §6): its participants, phase and negotiation,
 * and the message log in order. Load → pure rule (src/collaboration) → one transaction
 * (the change, its audit records) → effects (the sender's blocking status in its AgentDO,
 * timers). A query blocks its sender until the response, its timeout (alarm), a cancel, or
 * a deadlock broken at it; a blocking escalation, until a person answers or its timeout;
 * messages with a ttl are dropped by alarm when unanswered.
 */

/** A query's wait for its response when it names none. */
export const DEFAULT_QUERY_TIMEOUT_S = 30;
const FORMAT = 1;

const MIGRATIONS: readonly SchemaMigration[] = [
  {
    version: 1,
    statements: [
      `CREATE TABLE collaboration (id INTEGER PRIMARY KEY CHECK (id = 1), tenant TEXT NOT NULL, record TEXT NOT NULL, format INTEGER NOT NULL DEFAULT ${FORMAT})`,
      `CREATE TABLE messages (
         seq         INTEGER PRIMARY KEY AUTOINCREMENT,
         id          TEXT NOT NULL UNIQUE,
         record      TEXT NOT NULL,
         format      INTEGER NOT NULL DEFAULT ${FORMAT}
       )`,
      ...OUTBOX_DDL,
      ...TIMERS_DDL,
    ],
  },
];

type Stored = Omit<Collaboration, "messages">;

export class CollaborationDO extends DurableObject<Env> implements CollaborationRpc {
  private readonly sql: Sql;
  private readonly schema: SchemaGate;
  private readonly outbox: Outbox;
  private readonly timers: Timers;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = createSql(ctx.storage);
    this.schema = new SchemaGate(ctx.storage, this.sql, MIGRATIONS);
    this.outbox = new Outbox(this.sql);
    this.timers = new Timers(ctx.storage, this.sql, () => this.now());
  }

  async create(tenant: string, id: string, args: CollaborationCreate): Promise<Result<Collaboration>> {
    this.schema.ensure();
    const existing = this.load();
    if (existing) {
      // Creating it again joins whoever is not in it yet (a session's collaboration grows with its agents).
      const joining = [args.initiator, ...args.participants].filter((p) => !existing.record.participants.includes(p));
      if (joining.length === 0) return ok(this.view(existing.record));
      const now = this.now();
      const next: Stored = {
        ...existing.record,
        participants: [...existing.record.participants, ...new Set(joining)],
        updated_at: new Date(now).toISOString(),
      };
      await this.commit(
        [
          this.audit(tenant, next, "collaboration.joined", { actor: args.initiator, actor_type: "agent" }, now, {
            joined: [...new Set(joining)],
          }),
        ],
        () => this.saveRecord(next),
      );
      return ok(this.view(next));
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
        this.audit(tenant, record, "collaboration.created", { actor: args.initiator, actor_type: "agent" }, now, {
          participants: record.participants,
        }),
      ],
      () => {
        this.sql`INSERT INTO collaboration (id, tenant, record) VALUES (1, ${tenant}, ${JSON.stringify(record)})`;
      },
    );
    return ok(this.view(record));
  }

  async get(): Promise<Result<Collaboration>> {
    const loaded = this.load();
    return loaded ? ok(this.view(loaded.record)) : notFound();
  }

  async send(input: CollabMessageInput): Promise<Result<SentMessage>> {
    const loaded = this.load();
    if (!loaded) return notFound();
    const { tenant, record } = loaded;
    for (const [field, agent] of [
      ["from", input.from],
      ["to", input.to],
    ] as const) {
      if (agent !== undefined && !record.participants.includes(agent)) {
        return err("VALIDATION_FAILED", `'${agent}' is not a participant of this collaboration.`, {
          issues: [{ path: field, message: "must be a participant" }],
          participants: record.participants,
        });
      }
    }
    const answered = input.correlation_id === undefined ? null : this.message(input.correlation_id);
    if (REPLY_TYPES.includes(input.type) && !answered) {
      return err("VALIDATION_FAILED", `No message '${input.correlation_id}' in this collaboration to answer.`, {
        issues: [{ path: "correlation_id", message: "must name a message of this collaboration" }],
      });
    }
    if (record.phase === "completion")
      return err("INVALID_TRANSITION", "The collaboration is complete: it takes no more messages.", {
        phase: record.phase,
      });
    const state: NegotiationState = { phase: record.phase, proposal_id: record.proposal_id, terms: record.terms };
    const event = phaseEvent(input, state);
    const moved = event ? movePhase(record.phase, event) : null;
    if (moved && !moved.ok) {
      return err("INVALID_TRANSITION", `A ${input.type} is not allowed in the ${record.phase} phase.`, {
        phase: record.phase,
        event,
        allowed: moved.allowed,
      });
    }
    const now = this.now();
    const at = new Date(now).toISOString();
    const id = `cmsg_${ulid(now).toLowerCase()}`;
    const waitS =
      input.type === "query"
        ? (input.timeout_s ?? DEFAULT_QUERY_TIMEOUT_S)
        : input.type === "escalate"
          ? (input.timeout_s ?? DEFAULT_ESCALATION_TIMEOUT_S)
          : input.ttl_s;
    const message: CollabMessage = {
      id,
      seq: 0,
      collaboration_id: record.id,
      type: input.type,
      from: input.from,
      to: input.to ?? null,
      subject: input.subject ?? null,
      payload: input.payload,
      priority: input.priority,
      correlation_id: input.correlation_id ?? null,
      status: INITIAL_MESSAGE_STATUS,
      sent_at: at,
      expires_at: waitS === undefined ? null : new Date(now + waitS * 1000).toISOString(),
      answered_by: null,
      error: null,
      reply: null,
      resolved_by: null,
    };
    let next: Stored = { ...record, updated_at: at };
    if (event && moved?.ok) {
      const proposals = new Map(
        this.messages()
          .filter((m) => m.type === "negotiate")
          .map((m) => [m.id, m.payload]),
      );
      const negotiation = negotiated(state, event, moved.phase, { id, payload: input.payload }, proposals);
      next = {
        ...next,
        phase: negotiation.phase,
        proposal_id: negotiation.proposal_id,
        terms: negotiation.terms,
        ...(event === "reject_final"
          ? { outcome: "rejected" as const }
          : event === "cancel"
            ? { outcome: "cancelled" as const }
            : {}),
      };
    }
    // A response (or a cancel) answers an open query: the query's sender stops waiting.
    const closes =
      answered?.type === "query" && isOpen(answered) && (input.type === "response" || input.type === "cancel")
        ? answered
        : null;
    const actor: Actor = { actor: input.from, actor_type: "agent" };
    const records = [
      this.audit(tenant, next, "collaboration.message_sent", actor, now, {
        message_id: id,
        type: input.type,
        from: input.from,
        to: input.to ?? null,
        priority: input.priority,
        correlation_id: input.correlation_id ?? null,
      }),
    ];
    if (next.phase !== record.phase)
      records.push(
        this.audit(tenant, next, "collaboration.phase_changed", actor, now, {
          from: record.phase,
          to: next.phase,
          message_id: id,
        }),
      );
    // An escalation is a person's to answer: it is in the tenant's inbox (GET /v1/inbox) too.
    if (input.type === "escalate") {
      records.push(
        this.audit(tenant, next, "inbox.item_created", actor, now, {
          inbox_id: escalationInboxId(id, record.id),
          kind: "escalation",
          agent: input.from,
          run_id: null,
          handoff_id: null,
          reason: input.subject ?? "escalation",
          expires_at: message.expires_at,
        }),
      );
    }
    await this.commit(records, () => {
      this.saveRecord(next);
      message.seq = this.insert(message);
      if (message.expires_at !== null)
        this.timers.schedule(
          "collab.expire",
          Date.parse(message.expires_at),
          { message_id: id },
          { key: TIMER_KEYS.collabMessage(id) },
        );
      if (closes) {
        this.update(closeMessage(closes, { event: input.type === "cancel" ? "cancel" : "respond", by: id })!);
        this.timers.cancel(TIMER_KEYS.collabMessage(closes.id));
      }
    });
    if (input.type === "query") {
      await agentRpc(this.env, tenant, input.from).blockOn({
        tenant,
        self: input.from,
        kind: "internal",
        to: input.to!,
        reason: input.subject ?? "query",
        message_id: id,
        collaboration_id: record.id,
      });
    }
    // A blocking escalation (the default) holds its sender until a person answers.
    if (input.type === "escalate" && input.payload.blocking !== false) {
      await agentRpc(this.env, tenant, input.from).blockOn({
        tenant,
        self: input.from,
        kind: "user",
        to: "user",
        reason: input.subject ?? "escalation",
        message_id: id,
        collaboration_id: record.id,
      });
    }
    if (closes) await agentRpc(this.env, tenant, closes.from).unblock(closes.id);
    const sent: SentMessage = { message: this.message(id)! };
    const capabilities = input.payload.capabilities;
    if (input.type === "broadcast" && Array.isArray(capabilities) && capabilities.every((c) => typeof c === "string")) {
      const directory = await agentDirectory(this.env.DB, tenant);
      const agents = record.participants
        .filter((p) => p !== input.from)
        .flatMap((p) => (directory.byName.has(p) ? [directory.byName.get(p)!] : []));
      const exclude = Array.isArray(input.payload.exclude)
        ? (input.payload.exclude as unknown[]).filter((e): e is string => typeof e === "string")
        : [];
      const minScore = typeof input.payload.min_score === "number" ? input.payload.min_score : 0;
      sent.matches = matchCapabilities(agents, capabilities as string[], { exclude, min_score: minScore });
    }
    return ok(sent);
  }

  async complete(args: CollaborationComplete): Promise<Result<Collaboration>> {
    const loaded = this.load();
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
        this.audit(tenant, next, "collaboration.completed", { actor: "api", actor_type: "user" }, now, {
          outcome: args.outcome,
          from: record.phase,
        }),
      ],
      () => this.saveRecord(next),
    );
    return ok(this.view(next));
  }

  async resolveEscalation(messageId: string, args: EscalationResolve): Promise<Result<CollabMessage>> {
    const loaded = this.load();
    if (!loaded) return notFound();
    const escalation = this.message(messageId);
    if (escalation?.type !== "escalate")
      return err("NOT_FOUND", `No escalation '${messageId}' in this collaboration.`, { message_id: messageId });
    const by = args.by ?? "api";
    const answered = closeMessage(escalation, { event: "resolve", reply: args.reply, by });
    if (!answered)
      return err("INBOX_ITEM_CLOSED", `Escalation '${messageId}' is ${escalation.status}.`, {
        message_id: messageId,
        status: escalation.status,
      });
    const now = this.now();
    const next = { ...loaded.record, updated_at: new Date(now).toISOString() };
    const records = [
      this.audit(loaded.tenant, next, "collaboration.escalation_resolved", { actor: by, actor_type: "user" }, now, {
        message_id: messageId,
        from: escalation.from,
      }),
      this.audit(loaded.tenant, next, "inbox.item_resolved", { actor: by, actor_type: "user" }, now, {
        inbox_id: escalationInboxId(messageId, next.id),
        agent: escalation.from,
        outcome: "resolved",
        resolved_by: by,
      }),
    ];
    await this.commit(records, () => {
      this.saveRecord(next);
      this.update(answered);
      this.timers.cancel(TIMER_KEYS.collabMessage(messageId));
    });
    await agentRpc(this.env, loaded.tenant, escalation.from).unblock(messageId);
    return ok(answered);
  }

  async resolveWait(
    messageId: string,
    code: "DEADLOCK_RESOLVED",
    cycle: string[],
  ): Promise<Result<{ resolved: boolean }>> {
    const loaded = this.load();
    const query = loaded ? this.message(messageId) : null;
    const broken = query ? closeMessage(query, { event: "break_deadlock", code }) : null;
    if (!loaded || !query || !broken) return ok({ resolved: false });
    const now = this.now();
    const next = { ...loaded.record, updated_at: new Date(now).toISOString() };
    const record = this.audit(loaded.tenant, next, "deadlock.resolved", { actor: "relay", actor_type: "system" }, now, {
      message_id: messageId,
      waiter: query.from,
      waiting_for: query.to,
      cycle,
    });
    await this.commit([record], () => {
      this.saveRecord(next);
      this.update(broken);
      this.timers.cancel(TIMER_KEYS.collabMessage(messageId));
    });
    await agentRpc(this.env, loaded.tenant, query.from).unblock(messageId);
    return ok({ resolved: true });
  }

  override async alarm(): Promise<void> {
    try {
      if (!this.schema.ready()) return;
      await this.timers.run({
        "collab.expire": (timer) => this.expire(timer.payload.message_id),
        "outbox.flush": (timer, now) => this.flush(timer, now),
      });
    } catch (error) {
      // Never throw from an alarm: the platform drops it after six retries.
      console.error("CollaborationDO alarm failed; re-arming", error);
      this.timers.forget();
      await this.ctx.storage.setAlarm(this.now() + 30_000).catch(() => undefined);
    }
  }

  /** A message's ttl ran out unanswered (dropped), or a query's timeout (its sender is told QUERY_TIMEOUT). */
  private async expire(messageId: string): Promise<TimerOutcome> {
    const loaded = this.load();
    const message = loaded ? this.message(messageId) : null;
    const closed = message ? closeMessage(message, deadlineChange(message)) : null;
    if (!loaded || !message || !closed) return { type: "done" };
    const now = this.now();
    const next = { ...loaded.record, updated_at: new Date(now).toISOString() };
    const records = [
      this.audit(loaded.tenant, next, deadlineAction(message), { actor: "relay", actor_type: "system" }, now, {
        message_id: messageId,
        type: message.type,
        from: message.from,
        to: message.to,
      }),
    ];
    if (message.type === "escalate")
      records.push(
        this.audit(loaded.tenant, next, "inbox.item_expired", { actor: "relay", actor_type: "system" }, now, {
          inbox_id: escalationInboxId(messageId, next.id),
          agent: message.from,
          outcome: "expired",
          resolved_by: null,
        }),
      );
    await this.commit(records, () => {
      this.saveRecord(next);
      this.update(closed);
    });
    if (unblocksSender(message)) await agentRpc(this.env, loaded.tenant, message.from).unblock(messageId);
    return { type: "done" };
  }

  private async flush(timer: TimerRow, now: number): Promise<TimerOutcome> {
    try {
      const { remaining } = await this.outbox.flush((records) => writeAuditBatch(this.env.DB, records));
      return remaining > 0 ? { type: "again", at: this.now() } : { type: "done" };
    } catch (error) {
      return { type: "retry", at: now + flushBackoffMs(timer.attempts + 1), error: String(error) };
    }
  }

  /** The object's clock. */
  protected now(): number {
    return Date.now();
  }

  // ── Storage ───────────────────────────────────────────────────────────────

  private load(): { tenant: string; record: Stored } | null {
    if (!this.schema.ready()) return null;
    const row = this.sql<{
      tenant: string;
      record: string;
      format: number;
    }>`SELECT tenant, record, format FROM collaboration WHERE id = 1`[0];
    if (!row) return null;
    if (row.format !== FORMAT) throw new Error(`collaboration format ${row.format} is not ${FORMAT}`);
    const { messages: _messages, ...record } = Collaboration.parse({ ...JSON.parse(row.record), messages: [] });
    return { tenant: row.tenant, record };
  }

  private saveRecord(record: Stored): void {
    this.sql`UPDATE collaboration SET record = ${JSON.stringify(record)} WHERE id = 1`;
  }

  private insert(message: CollabMessage): number {
    const seq = this.sql<{
      seq: number;
    }>`INSERT INTO messages (id, record) VALUES (${message.id}, ${JSON.stringify(message)}) RETURNING seq`[0]!.seq;
    this.update({ ...message, seq });
    return seq;
  }

  private update(message: CollabMessage): void {
    this.sql`UPDATE messages SET record = ${JSON.stringify(message)} WHERE id = ${message.id}`;
  }

  private message(id: string): CollabMessage | null {
    const row = this.sql<{ record: string }>`SELECT record FROM messages WHERE id = ${id}`[0];
    return row ? CollabMessage.parse(JSON.parse(row.record)) : null;
  }

  private messages(): CollabMessage[] {
    return this.sql<{ record: string }>`SELECT record FROM messages ORDER BY seq`.map((r) =>
      CollabMessage.parse(JSON.parse(r.record)),
    );
  }

  private view(record: Stored): Collaboration {
    return { ...record, messages: this.messages() };
  }

  private audit(
    tenant: string,
    record: Stored,
    action: string,
    actor: Actor,
    now: number,
    details: Record<string, unknown>,
  ): AuditRecord {
    return auditEvent(
      { tenant, session_id: null },
      { action, actor, details: { collaboration_id: record.id, phase: record.phase, ...details } },
      now,
    );
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
