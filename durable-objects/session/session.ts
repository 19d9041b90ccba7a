import { DurableObject } from "cloudflare:workers";
import { nextFlushAt } from "../../src/audit/outbox-policy";
import { type Actor, API_ACTOR, type AuditRecord } from "../../src/audit/record";
import type { Env } from "../../src/env";
import { type ErrorBody, err, ok, type Result } from "../../src/errors";
import type {
  AddedMessage,
  HandoffAccepted,
  HistoryPage,
  MessageOptions,
  MessageRun,
  MessageTask,
  RunList,
  RunListQuery,
  RunTaskView,
  SessionAuditPage,
  SessionCreateArgs,
  SessionRpc,
  StartHandoffArgs,
  ToolOutputsArgs,
} from "../../src/rpc/session";
import { liveHandoffStatus } from "../../src/runtime/live-events";
import type { Fanout, FanoutStart } from "../../src/schemas/collaboration";
import type { Handoff } from "../../src/schemas/handoff";
import type { InboxAnswer, InboxItem } from "../../src/schemas/inbox";
import type { CompactionList, MemoryFact, MemoryView } from "../../src/schemas/memory";
import type { Run, TracePage } from "../../src/schemas/run";
import type { AgentTurnStatus, SessionMessage, SessionStatePatch, SessionView } from "../../src/schemas/session";
import { type SessionRecord, toView } from "../../src/sessions/model";
import type { TraceContext } from "../../src/telemetry/trace-context";
import { Outbox } from "../shared/outbox";
import { createSql, SchemaGate, type Sql } from "../shared/sql";
import { TIMER_KEYS } from "../shared/timer-kinds";
import { combineHandlers, type TimerHandlers, Timers } from "../shared/timers";
import { SessionDeliveries } from "./deliveries/session-deliveries";
import { FanoutStore } from "./fanout/fanout-store";
import { SessionFanout } from "./fanout/session-fanout";
import { handoffEndHook, handoffTimers } from "./handoffs/handoff-timers";
import { SessionHandoffs } from "./handoffs/session-handoffs";
import { InboxStore } from "./inbox-store";
import { LiveHub } from "./live/live-hub";
import { LiveStore } from "./live/live-store";
import { CompactionStore } from "./memory/compaction-store";
import { MemoryStore } from "./memory/memory-store";
import { SessionMemoryFacts } from "./memory/session-memory-facts";
import { RemoteThreads } from "./runs/remote-threads";
import { RunStore } from "./runs/run-store";
import { runEndHook, runTimers } from "./runs/run-timers";
import { RunViews } from "./runs/run-views";
import { SessionRuns } from "./runs/session-runs";
import { SessionConversation } from "./session-conversation";
import type { FlowCheckpoint, SessionKernel } from "./session-kernel";
import { SessionLifecycle } from "./session-lifecycle";
import { SessionMessages } from "./session-messages";
import { SESSION_MIGRATIONS, SESSION_SCHEMA, SESSION_TABLES_DEFERRED, SessionStore } from "./session-store";
import { SessionTelemetry } from "./telemetry/session-telemetry";
import { SessionTriggers } from "./triggers/session-triggers";
import { TriggerPoints } from "./triggers/trigger-queue";

/**
 * One collaboration session: conversation, state, current agent, handoff stack, agents'
 * turn status, timers and the audit outbox. Every mutating method is load → pure
 * function → one `transactionSync` writing the new state and its audit rows → timers.
 * Methods return `Result`s: codes survive RPC as values.
 */
export class SessionDO extends DurableObject<Env> implements SessionRpc {
  protected readonly sql: Sql;
  private readonly store: SessionStore;
  private readonly outbox: Outbox;
  private readonly timers: Timers;
  private readonly kernel: SessionKernel;
  private readonly handoffs: SessionHandoffs;
  private readonly runs: SessionRuns;
  private readonly views: RunViews;
  private readonly triggers: SessionTriggers;
  private readonly deliveries: SessionDeliveries;
  private readonly telemetry: SessionTelemetry;
  private readonly fanout: SessionFanout;
  private readonly conversation: SessionConversation;
  private readonly messages: SessionMessages;
  private readonly schema: SchemaGate;
  private readonly liveEvents: LiveStore;
  private readonly hub: LiveHub;
  private readonly lifecycle: SessionLifecycle;
  private readonly facts: SessionMemoryFacts;
  /** Every timer kind's handler. */
  private readonly timerHandlers: TimerHandlers;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // A table a new session does not make at once is made by the first statement that names it.
    this.sql = createSql(ctx.storage, (table) => this.schema.create(table));
    this.schema = new SchemaGate(ctx.storage, this.sql, SESSION_MIGRATIONS, SESSION_SCHEMA, SESSION_TABLES_DEFERRED);
    this.store = new SessionStore(this.sql, this.schema);
    this.liveEvents = new LiveStore(this.sql, this.schema);
    this.outbox = new Outbox(this.sql, (records) => {
      this.deliveries.onAudit(records);
      this.telemetry.onAudit(records);
      this.liveEvents.append(liveHandoffStatus(records));
    });
    this.timers = new Timers(ctx.storage, this.sql, () => this.now());
    this.hub = new LiveHub({ ctx, store: this.liveEvents, ready: () => this.schema.ready() });
    this.kernel = {
      storage: ctx.storage,
      env,
      tables: this.schema,
      store: this.store,
      outbox: this.outbox,
      timers: this.timers,
      inbox: new InboxStore(this.sql, this.schema),
      memory: new MemoryStore(this.sql, this.schema),
      compactions: new CompactionStore(this.sql, this.schema),
      liveEvents: this.liveEvents,
      deltas: this.hub,
      now: () => this.now(),
      checkpoint: (point) => this.checkpoint(point),
      live: () => this.live(),
      view: (session) => this.view(session),
      commit: (session, records, extra) => this.commit(session, records, extra),
      transaction: (fn) => this.transaction(fn),
      destroy: () => this.destroy(),
    };
    // Built in the order they use each other: no part reaches back to one built after it.
    const runStore = new RunStore(this.sql, this.liveEvents, this.schema);
    const points = new TriggerPoints(this.sql, this.timers, () => this.now(), this.schema);
    this.handoffs = new SessionHandoffs(this.kernel, this.sql);
    this.fanout = new SessionFanout(this.kernel, runStore, new FanoutStore(this.sql, this.schema));
    const threads = new RemoteThreads(this.sql, this.schema);
    this.runs = new SessionRuns(this.kernel, runStore, this.handoffs, points, this.fanout, threads);
    this.views = new RunViews(this.kernel, this.runs, this.hub);
    this.triggers = new SessionTriggers(this.kernel, this.handoffs, runStore, points);
    this.conversation = new SessionConversation(this.kernel, this.triggers, this.handoffs);
    this.messages = new SessionMessages(this.kernel, this.runs, this.triggers, this.schema, this.liveEvents, this.hub);
    this.facts = new SessionMemoryFacts(this.kernel);
    // Answered by the runtime without waking a hibernated object.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
    this.deliveries = new SessionDeliveries(this.kernel, this.sql);
    this.telemetry = new SessionTelemetry(this.kernel, this.sql, runStore);
    const endHooks = [
      runEndHook(this.runs),
      handoffEndHook(this.handoffs, this.kernel),
      this.deliveries.endHook(),
      this.telemetry.endHook(),
    ];
    this.lifecycle = new SessionLifecycle(this.kernel, this.schema, this.handoffs, runStore, this.triggers, endHooks);
    this.timerHandlers = combineHandlers(
      this.lifecycle.timerHandlers(),
      handoffTimers(this.handoffs),
      runTimers(this.runs),
      this.triggers.timerHandlers(),
      this.deliveries.timerHandlers(),
      this.telemetry.timerHandlers(),
      this.fanout.timerHandlers(),
    );
    // A quick SQL read: a flow or run a crash interrupted gets its recovery timer due now.
    void ctx.blockConcurrencyWhile(async () => {
      await this.handoffs.onStart();
      await this.runs.onStart();
    });
  }

  // ── Sessions ──────────────────────────────────────────────────────────────

  /** Creates the session; creating it again returns the same session (the id is the idempotency key). */
  create(tenant: string, id: string, args: SessionCreateArgs, actor: Actor = API_ACTOR): Promise<Result<SessionView>> {
    return this.lifecycle.create(tenant, id, args, actor);
  }

  async get(): Promise<Result<SessionView>> {
    const loaded = this.live();
    return loaded.ok ? ok(this.view(loaded.value)) : loaded;
  }

  addMessage(message: SessionMessage, caller: Actor = API_ACTOR): Promise<Result<AddedMessage>> {
    return this.conversation.add(message, caller);
  }

  /** The conversation in order, `limit` items after sequence number `after`. */
  async history(page: { after?: number; limit?: number } = {}): Promise<Result<HistoryPage>> {
    return this.conversation.history(page);
  }

  patchState(patch: SessionStatePatch, actor: Actor = API_ACTOR): Promise<Result<SessionView>> {
    return this.conversation.patchState(patch, actor);
  }

  /** Reports an agent's turn status in this session (graceful handoffs wait for `idle`). */
  setAgentStatus(agent: string, status: AgentTurnStatus, actor?: Actor): Promise<Result<SessionView>> {
    return this.conversation.setAgentStatus(agent, status, actor);
  }

  /** Deletes the session (see SessionLifecycle.delete). */
  delete(actor: Actor = API_ACTOR): Promise<Result<{ deleted: true }>> {
    return this.lifecycle.delete(actor);
  }

  /** The session's own audit trail in time order, flushed and pending alike (read-your-writes). */
  async audit({ after, limit = 100 }: { after?: string; limit?: number } = {}): Promise<Result<SessionAuditPage>> {
    const session = this.schema.ready() ? this.store.load() : null;
    if (!session || session.status === "deleted") return err("SESSION_NOT_FOUND", "No such session.");
    const rows = this.outbox.list({ after, limit: limit + 1 });
    const records = rows.slice(0, limit);
    return ok({
      records,
      pending: this.outbox.pendingCount(),
      next_after: rows.length > limit ? (records.at(-1)?.id ?? null) : null,
    });
  }

  // ── Memory (memory/) ────────────────────────────

  /** Every compaction of the session's views, oldest first (docs/memory.md). */
  async compactions(): Promise<Result<CompactionList>> {
    return this.facts.compactions();
  }

  async memory(): Promise<Result<MemoryView>> {
    return this.facts.view();
  }

  writeFact(key: string, value: string, actor: Actor = API_ACTOR): Promise<Result<MemoryFact>> {
    return this.facts.write(key, value, actor);
  }

  deleteFact(key: string, actor: Actor = API_ACTOR): Promise<Result<{ deleted: true }>> {
    return this.facts.delete(key, actor);
  }

  // ── Handoffs (handoffs/) ──────────────────────────

  async startHandoff(args: StartHandoffArgs, actor?: Actor): Promise<Result<HandoffAccepted>> {
    const started = await this.handoffs.start(args, actor);
    if (started.ok) await this.triggers.arm();
    return started;
  }

  // ── Fan-out (fanout/) ────────────────────────────

  async fanOut(args: FanoutStart, actor: Actor = API_ACTOR): Promise<Result<Fanout>> {
    return this.fanout.start(args, actor);
  }

  async getFanout(id: string): Promise<Result<Fanout>> {
    return this.fanout.get(id);
  }

  // ── Triggers (triggers/) ─────────────────────────

  /** A session event: event triggers are asked (now, or once the session is idle). */
  async postEvent(name: string, data: unknown): Promise<Result<{ handoff: Handoff | null; queued: boolean }>> {
    return this.triggers.fire({ type: "event", name, data });
  }

  /** Fires the current agent's explicit trigger for `target`. */
  async fireTrigger(target: string): Promise<Result<Handoff>> {
    return this.triggers.fireExplicit(target);
  }

  async getHandoff(id: string): Promise<Result<Handoff>> {
    return this.handoffs.get(id);
  }

  async cancelHandoff(id: string, actor?: Actor): Promise<Result<Handoff>> {
    return this.handoffs.cancel(id, actor);
  }

  async inbox(): Promise<Result<InboxItem[]>> {
    const loaded = this.live();
    return loaded.ok ? ok(this.kernel.inbox.list()) : loaded;
  }

  // ── Runs (runs/) ────────────────────────────────

  sendMessage(
    content: string,
    actor: Actor = API_ACTOR,
    task: MessageTask = {},
    options: MessageOptions = {},
  ): Promise<Result<MessageRun>> {
    return this.messages.send(content, actor, task, options);
  }

  /** A user message whose run is streamed as Server-Sent Events: its events as they happen, then the final object. */
  streamMessage(
    content: string,
    actor: Actor = API_ACTOR,
    task: MessageTask = {},
    options: MessageOptions = {},
  ): Promise<Result<{ stream: ReadableStream<Uint8Array> }>> {
    return this.messages.stream(content, actor, task, options);
  }

  /** A run with the conversation items of its time. */
  async runTask(id: string): Promise<Result<RunTaskView>> {
    return this.views.task(id);
  }

  async listRuns(query: RunListQuery): Promise<Result<RunList>> {
    return this.views.list(query);
  }

  /** The live events of an active run after `after` (else from now), then its result; no stream once it has ended. */
  async subscribeRun(
    id: string,
    after?: string,
  ): Promise<Result<{ run: Run; stream: ReadableStream<Uint8Array> | null }>> {
    return this.views.subscribe(id, after);
  }

  // ── Live subscribers (live/) ────────────────────────

  /**
   * `GET /v1/sessions/:id/ws`, forwarded by the Worker after auth: a hibernatable WebSocket of the
   * session's live events.
   */
  override async fetch(request: Request): Promise<Response> {
    return this.hub.upgrade(request, this.live());
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    this.hub.onMessage(ws, message);
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.hub.onClose(ws, code, reason);
  }

  /** Cancels a run (a model call in flight is aborted; its partial text is kept, marked cut). */
  async cancelRun(id: string, actor: Actor = API_ACTOR): Promise<Result<Run>> {
    return this.runs.cancel(id, actor);
  }

  async getRun(id: string): Promise<Result<Run>> {
    return this.runs.get(id);
  }

  async traceEvents(page: { after?: string; limit: number }): Promise<Result<TracePage>> {
    return this.runs.trace(page.after, page.limit);
  }

  async resolveInbox(
    id: string,
    answer: InboxAnswer,
    actor: Actor = API_ACTOR,
    resumedBy?: TraceContext,
  ): Promise<Result<{ item: InboxItem; run: Run | null }>> {
    return this.runs.inbox.resolve(id, answer, actor, resumedBy);
  }

  async submitToolOutputs(
    args: ToolOutputsArgs,
    actor: Actor = API_ACTOR,
    resumedBy?: TraceContext,
  ): Promise<Result<{ run: Run }>> {
    return this.runs.toolOutputs(args, actor, resumedBy);
  }

  // ── Time and checkpoints ──────────────────────────────────────────────────

  /** The object's clock. */
  protected now(): number {
    return Date.now();
  }

  /** A handoff flow passed `point` (see SessionKernel.checkpoint); nothing to do here. */
  protected checkpoint(_point: FlowCheckpoint): void {}

  // ── Write path ────────────────────────────────────────────────────────────

  /** The one write path (see SessionKernel.commit). */
  private async commit(session: SessionRecord, records: readonly AuditRecord[], extra?: () => void): Promise<void> {
    this.transaction(() => {
      this.store.save(session);
      this.outbox.append(records);
      extra?.();
      // `keep`: a flush already waiting out a D1 backoff keeps its schedule.
      this.timers.schedule("outbox.flush", nextFlushAt(this.now()), null, { key: TIMER_KEYS.flush, ifExists: "keep" });
      // `earliest`: activity only pushes the expiry later, and the expiry handler re-checks
      // and moves itself when it fires early, so an earlier timer stands (no write, no re-arm).
      if (session.status === "active")
        this.timers.schedule("session.expire", session.expires_at, null, {
          key: TIMER_KEYS.expire,
          ifExists: "earliest",
        });
    });
    await this.timers.arm();
    this.hub.publish();
  }

  /** See SessionKernel.transaction. */
  private transaction<T>(fn: () => T): T {
    try {
      return this.ctx.storage.transactionSync(fn);
    } catch (error) {
      // Rolled back: what this instance thought it wrote (session, timers, lease, tables made) is not there.
      this.schema.forgetTables();
      this.store.forget();
      this.timers.forget();
      this.handoffs.forget();
      throw error;
    }
  }

  private view(session: SessionRecord): SessionView {
    return toView(session, this.store.historyLength(), this.store.agentStatus());
  }

  /** The live session, or why there is none. */
  private live(): Result<SessionRecord> {
    const session = this.schema.ready() ? this.store.load() : null;
    if (!session) return err("SESSION_NOT_FOUND", "No such session.");
    return session.status === "active" ? ok(session) : this.gone(session);
  }

  private gone(session: SessionRecord): { ok: false; error: ErrorBody } {
    if (session.status === "expired") {
      const expired_at = new Date(session.ended_at ?? session.expires_at).toISOString();
      return err("SESSION_EXPIRED", `Session expired at ${expired_at}.`, { session_id: session.id, expired_at });
    }
    return err("SESSION_NOT_FOUND", "No such session.");
  }

  // ── Timers and lifecycle ──────────────────────────────────────────────────

  override async alarm(): Promise<void> {
    try {
      if (!this.schema.ready()) return;
      await this.timers.run(this.timerHandlers);
    } catch (error) {
      // Never throw from an alarm: the platform drops it after six retries.
      console.error("SessionDO alarm failed; re-arming", error);
      this.timers.forget();
      await this.ctx.storage.setAlarm(this.now() + 30_000).catch(() => undefined);
    }
  }

  private async destroy(): Promise<void> {
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.store.forget();
    this.timers.forget();
    this.handoffs.forget();
    this.schema.forget();
  }
}
