import { messageAdded } from "../src/audit/events";
import { handoffToolCalled, inboxItemClosed, inboxItemCreated, runStarted } from "../src/audit/run-events";
import { SYSTEM_ACTOR, type Actor, type AuditRecord } from "../src/audit/record";
import { err, ok, type ErrorBody, type Result } from "../src/errors";
import { ulid } from "../src/lib/ulid";
import type { AgentTurnResult } from "../src/runtime/agent-turn";
import { closeItem, openItem } from "../src/runtime/inbox";
import { escalationOutput, handoffOutput, interpretTurn, type TurnAction } from "../src/runtime/interpret";
import { withoutCalls } from "../src/runtime/messages";
import { isActiveRun, moveRun, newRun, newRunId, traceEvent, type RunChange } from "../src/runtime/run-record";
import { callModel, planTurn, turnTimeoutMs } from "../src/runtime/turn";
import { callWebhookAgent, agentSecret } from "../src/runtime/webhook-agent";
import type { AgentDefinition } from "../src/schemas/agent";
import type { HistoryItem } from "../src/schemas/handoff";
import type { MessageRun } from "../src/rpc/session";
import type { InboxItem } from "../src/schemas/inbox";
import { DEFAULT_MAX_TURNS, type Run, type RunStatus, type TraceEvent, type TracePage } from "../src/schemas/run";
import { agentModels } from "../src/services/agent-models";
import { agentDirectory } from "../src/services/registry-cache";
import { toHistoryItem, touch, type SessionRecord } from "../src/sessions/model";
import { RunStore, type RunRow, type RunStep } from "./run-store";
import type { SessionHandoffs } from "./session-handoffs";
import { auditScope, type SessionKernel } from "./session-kernel";
import type { Sql } from "./sql";
import { TIMER_KEYS } from "./timer-kinds";

/**
 * The run feature of the SessionDO (design §4a): a user message runs the current agent's
 * turn, repeated while it calls tools and continued by the target after a handoff, until
 * a final answer, a pause for a person, or max_turns. The decisions are pure
 * (src/runtime: what a turn is offered, what a response means, how a run moves); this is
 * the glue: every step's items, run record, trace events and audit records in one
 * transaction, the external calls (model, webhook, handoff engine) between them.
 *
 * - One run at a time: a message while one is running or waiting is RUN_IN_PROGRESS.
 * - Each step is recorded before it is taken (`step`), so a restart resumes a run that
 *   was running (the sweep timer, or the next call) — at most MAX_RESUMES times, then it
 *   fails with RUN_INTERRUPTED. A run is never left `running` with nothing driving it.
 */

/** How long a message's request waits for its run before answering with the run still running (202). */
export const RUN_WAIT_MS = 25_000;
/** Restarts a run survives before it fails with RUN_INTERRUPTED. */
const MAX_RESUMES = 2;
/** Escalations wait this long for a person before the agent is told nobody answered. */
export const ESCALATION_TIMEOUT_MS = 24 * 3_600_000;
/** The watchdog: a running run's resume timer, pushed on while its loop makes progress. */
export const WATCHDOG_MS = 120_000;

export class SessionRuns {
  readonly store: RunStore;
  /** Runs whose loop runs in this instance; an active run not in here was left by a restart. */
  private readonly driving = new Map<string, Promise<void>>();

  constructor(
    private readonly k: SessionKernel,
    private readonly handoffs: SessionHandoffs,
    sql: Sql,
  ) {
    this.store = new RunStore(sql);
  }

  // ── Requests ──────────────────────────────────────────────────────────────

  /** A user message: stored, and it starts a run of the current agent. */
  async userMessage(content: string, actor: Actor): Promise<Result<MessageRun>> {
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    await this.resumeOrphan();
    const open = this.store.active();
    if (open) {
      return err("RUN_IN_PROGRESS", `Run ${open.run.id} is ${open.run.status}; send the next message when it has ended.`, {
        run_id: open.run.id,
        status: open.run.status,
      });
    }
    const now = this.k.now();
    const session = touch(loaded.value, now);
    const scope = auditScope(session);
    const item = toHistoryItem({ role: "user", content }, session.current_agent, `msg_${ulid(now)}`, now);
    const run = newRun({ id: newRunId(session.id, now), session_id: session.id, agent: session.current_agent, max_turns: maxTurnsOf(session), now });
    const start = traceEvent(run, "agent_start", run.agent, now, { outcome: "run started" });
    let seq = 0;
    await this.k.commit(session, [runStarted(scope, actor, now, { run_id: run.id, agent: run.agent, message_id: item.id! })], () => {
      seq = this.k.store.appendMessage(item, now);
      this.k.outbox.append([messageAdded(scope, actor, now, session.current_agent, { message_id: item.id!, seq, role: "user", author: null, chars: content.length })]);
      this.store.save({ run, step: null, resumes: 0 });
      this.store.addEvents([start]);
      this.watch(run.id, now);
    });
    await this.k.timers.arm();
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.drive(run.id), new Promise((resolve) => (timer = setTimeout(resolve, RUN_WAIT_MS)))]);
    clearTimeout(timer);
    return ok({ message: item, run: this.view(run.id)! });
  }

  get(id: string): Result<Run> {
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    const run = this.view(id);
    return run ? ok(run) : err("RUN_NOT_FOUND", `No run '${id}'.`, { run_id: id });
  }

  /** Every run's trace events, in order. */
  trace(after: string | undefined, limit: number): Result<TracePage> {
    const loaded = this.k.live();
    return loaded.ok ? ok(this.store.eventPage(after, limit)) : loaded;
  }

  /** A person's answer: closes the item and resumes the run it paused, with the reply as the agent's output. */
  async resolve(inboxId: string, reply: string, actor: Actor): Promise<Result<{ item: InboxItem; run: Run | null }>> {
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    const item = this.k.inbox.get(inboxId);
    if (!item) return err("INBOX_ITEM_NOT_FOUND", `No inbox item '${inboxId}'.`, { inbox_id: inboxId });
    const now = this.k.now();
    const closed = closeItem(item, "resolved", now, { reply, by: actor.actor });
    if (!closed) return err("INBOX_ITEM_CLOSED", `Inbox item '${inboxId}' is ${item.status}.`, { inbox_id: inboxId, status: item.status });
    const session = touch(loaded.value, now);
    const scope = auditScope(session);
    const records = [inboxItemClosed(scope, actor, now, { inbox_id: item.id, agent: item.agent, outcome: "resolved", resolved_by: actor.actor })];
    const paused = this.pausedOn(item.id);
    const items: HistoryItem[] = [];
    let next: RunRow | null = null;
    if (paused) {
      const agent = paused.run.pending!.agent;
      const call = paused.run.pending!.tool_call_id;
      if (call !== null) items.push(escalationOutput(agent, { id: call, name: "escalate_to_human", arguments: "{}" }, { answered: true, text: reply }));
      items.push({ role: "assistant", agent, type: "message", content: reply });
      next = this.moved(paused, "completed", { output: reply, output_agent: agent }, scope, actor, now, records);
      next.run = { ...next.run, agent };
    }
    await this.k.commit(session, records, () => {
      this.k.inbox.save(closed);
      this.append(session, items, actor, now);
      if (next) {
        this.store.save(next);
        this.store.addEvents([traceEvent(next.run, "agent_complete", next.run.agent, now, { executor: "human", outcome: "answered from the inbox" })]);
        this.k.timers.cancel(TIMER_KEYS.inbox(item.id));
      }
    });
    return ok({ item: closed, run: next ? this.view(next.run.id) : null });
  }

  // ── The loop ──────────────────────────────────────────────────────────────

  /** Drives a run until it ends or pauses; one loop per run per instance. */
  private drive(runId: string): Promise<void> {
    const existing = this.driving.get(runId);
    if (existing) return existing;
    const loop = this.loop(runId)
      .catch(async (error: unknown) => {
        console.error(`run ${runId}: the loop failed`, error);
        await this.finish(runId, "failed", { error: { code: "INTERNAL", message: "The run failed on an internal error." } }, SYSTEM_ACTOR).catch(() => undefined);
      })
      .finally(() => this.driving.delete(runId));
    this.driving.set(runId, loop);
    return loop;
  }

  private async loop(runId: string): Promise<void> {
    for (;;) {
      const row = this.store.get(runId);
      if (!row || row.run.status !== "running") return;
      const loaded = this.k.live();
      if (!loaded.ok) return;
      const session = loaded.value;
      let directory: ReadonlyMap<string, AgentDefinition>;
      try {
        directory = (await agentDirectory(this.k.env.DB, session.tenant)).byName;
      } catch (error) {
        await this.finish(runId, "failed", { error: { code: "DEPENDENCY_UNAVAILABLE", message: "The agent registry could not be read.", details: { reason: String(error) } } });
        return;
      }
      const agent = directory.get(session.current_agent);
      if (!agent || !agent.enabled) {
        const error: ErrorBody = agent
          ? { code: "AGENT_UNAVAILABLE", message: `Agent '${session.current_agent}' is disabled.`, details: { agent: session.current_agent, reason: "disabled" } }
          : { code: "AGENT_NOT_FOUND", message: `Agent '${session.current_agent}' is not in the registry.`, details: { agent: session.current_agent } };
        await this.finish(runId, "failed", { error }, SYSTEM_ACTOR, session.current_agent);
        return;
      }
      if (agent.kind === "human") {
        await this.awaitHuman(row, session, agent, null, `'${agent.name}' answers from the inbox.`);
        return;
      }
      if (row.run.turns >= row.run.max_turns) {
        await this.finish(runId, "failed", { error: { code: "MAX_TURNS_EXCEEDED", message: `The run reached max_turns (${row.run.max_turns}) without a final answer.`, details: { max_turns: row.run.max_turns } } });
        return;
      }
      if (!(await this.turn(row, session, agent, directory))) return;
    }
  }

  /** One turn of a model or webhook agent; false when the run ended or paused. */
  private async turn(row: RunRow, session: SessionRecord, agent: AgentDefinition, directory: ReadonlyMap<string, AgentDefinition>): Promise<boolean> {
    const now = this.k.now();
    const models = await agentModels(this.k.env, session.tenant);
    const plan = planTurn({
      run_id: row.run.id,
      agent,
      directory,
      session,
      history: this.k.store.history(),
      default_model: models.default_model,
    });
    const started = await this.record({ ...row, run: { ...row.run, agent: agent.name, turns: row.run.turns + 1 }, step: "turn" }, now);
    const timeout = turnTimeoutMs(agent);
    let result: AgentTurnResult;
    if (agent.kind === "webhook") {
      result = await callWebhookAgent({ name: agent.name, endpoint: agent.endpoint! }, plan.request, { secret: agentSecret(this.k.env as unknown as Record<string, unknown>, agent.name), timeoutMs: timeout });
    } else if (!models.provider.ok) {
      result = { ok: false, code: "DEPENDENCY_UNAVAILABLE" as const, message: models.provider.error.message, duration_ms: 0 };
    } else {
      result = await callModel(models.provider.value, plan.request, timeout);
    }
    const after = this.k.now();
    const executor = agent.kind === "webhook" ? "webhook" : "model";
    if (!result.ok) {
      const event = traceEvent(started.run, "agent_error", agent.name, after, { executor, model: plan.request.model }, result.duration_ms, result.code);
      await this.finish(row.run.id, "failed", { error: { code: result.code, message: result.message } }, undefined, agent.name, [event]);
      return false;
    }
    const decision = interpretTurn(agent.name, result.response, plan.tools);
    const usage = result.response.usage;
    const events: TraceEvent[] = [
      traceEvent(started.run, "llm_call", agent.name, after, {
        executor,
        model: result.model,
        ...(usage ? { tokens: { prompt: usage.prompt_tokens, completion: usage.completion_tokens, total: usage.total_tokens } } : {}),
      }, result.duration_ms),
      ...result.response.tool_calls.map((call) => traceEvent(started.run, "tool_call", agent.name, after, { tool_name: call.name, tool_args: safeArgs(call.arguments) })),
    ];
    return this.act(started, decision.action, [decision.assistant, ...decision.outputs], decision.ignored_call_ids, events, agent);
  }

  /** Carries out what the turn decided; false when the run ended or paused. */
  private async act(row: RunRow, action: TurnAction, items: HistoryItem[], ignored: string[], events: TraceEvent[], agent: AgentDefinition): Promise<boolean> {
    // The session may have ended while the agent was thinking: its answer goes nowhere.
    const session = this.k.store.load();
    if (!session || session.status !== "active" || this.store.get(row.run.id)?.run.status !== "running") return false;
    const now = this.k.now();
    const actor: Actor = { actor: agent.name, actor_type: "agent" };
    switch (action.type) {
      case "final": {
        events.push(traceEvent(row.run, "agent_complete", agent.name, now, { outcome: "final answer" }));
        await this.finish(row.run.id, "completed", { output: action.output, output_agent: agent.name }, actor, agent.name, events, items);
        await this.afterTurn();
        return false;
      }
      case "continue":
        await this.commitStep(session, { ...row, step: "turn" }, items, events, [], actor, now);
        return true;
      case "escalate":
        await this.commitStep(session, { ...row, step: "turn" }, items, events, [], actor, now);
        await this.awaitHuman(this.store.get(row.run.id)!, this.k.store.load()!, agent, action.call.id, action.reason);
        return false;
      case "handoff":
        return this.handoff(row, action, items, ignored, events, agent);
    }
  }

  /** A transfer or return the agent called: through the handoff engine, then the call's output. */
  private async handoff(row: RunRow, action: Extract<TurnAction, { type: "handoff" }>, items: HistoryItem[], ignored: string[], events: TraceEvent[], agent: AgentDefinition): Promise<boolean> {
    const actor: Actor = { actor: agent.name, actor_type: "agent" };
    let session = this.k.store.load()!;
    await this.commitStep(session, { ...row, step: "handoff" }, items, events, [], actor, this.k.now());
    const target = action.binding.target;
    const started = await this.handoffs.start(
      {
        request: {
          session_id: session.id,
          source_agent: agent.name,
          ...(action.binding.kind === "transfer" ? { target_agent: target } : {}),
          mode: action.binding.kind === "transfer" ? "transfer" : "return",
          policy: "immediate",
          reason: action.reason,
          ...(action.input === undefined ? {} : { payload: { input: action.input } }),
          timeout_s: 300,
          on_timeout: "fail",
        },
        hidden_calls: ignored,
      },
      actor,
    );
    const now = this.k.now();
    session = this.k.store.load()!;
    const fresh = this.store.get(row.run.id)!;
    const outcome = started.ok
      ? ({ ok: true, target } as const)
      : { ok: false as const, code: started.error.code, message: started.error.message, allowed: (started.error.details as { allowed?: string[] } | undefined)?.allowed ?? agent.handoffs.map((h) => h.to) };
    const output = handoffOutput(agent.name, action.call, outcome);
    const event = traceEvent(fresh.run, "handoff", agent.name, now, {
      from_agent: agent.name,
      to_agent: target,
      handoff_reason: action.reason,
      tool_name: action.call.name,
      outcome: started.ok ? "completed" : started.error.code,
    }, 0, started.ok ? null : started.error.code);
    const audit = handoffToolCalled(auditScope(session), actor, now, {
      run_id: row.run.id,
      agent: agent.name,
      tool_name: action.call.name,
      target,
      accepted: started.ok,
      ...(started.ok ? {} : { error_code: started.error.code }),
    });
    const next: RunRow = {
      ...fresh,
      step: "turn",
      run: { ...fresh.run, agent: session.current_agent, handoffs: started.ok ? [...fresh.run.handoffs, started.value.handoff.id] : fresh.run.handoffs },
    };
    const events2 = started.ok ? [event, traceEvent(next.run, "agent_start", session.current_agent, now, { from_agent: agent.name, outcome: "handed the conversation" })] : [event];
    await this.commitStep(session, next, [output], events2, [audit], actor, now);
    return true;
  }

  /** The run waits for a person: an inbox item that expires after the agent's timeout (or the escalation timeout). */
  private async awaitHuman(row: RunRow, session: SessionRecord, agent: AgentDefinition, callId: string | null, reason: string): Promise<void> {
    const now = this.k.now();
    const expires = now + (callId === null ? turnTimeoutMs(agent) : ESCALATION_TIMEOUT_MS);
    const item = openItem({
      kind: callId === null ? "human_turn" : "escalation",
      session_id: session.id,
      agent: agent.name,
      run_id: row.run.id,
      reason,
      details: callId === null ? {} : { tool_call_id: callId },
      now,
      expires_at: expires,
    });
    const scope = auditScope(session);
    const actor: Actor = callId === null ? SYSTEM_ACTOR : { actor: agent.name, actor_type: "agent" };
    const records: AuditRecord[] = [
      inboxItemCreated(scope, actor, now, { inbox_id: item.id, kind: item.kind, agent: agent.name, run_id: row.run.id, handoff_id: null, reason, expires_at: item.expires_at }),
    ];
    const pending = { kind: "human" as const, inbox_id: item.id, agent: agent.name, tool_call_id: callId, expires_at: item.expires_at! };
    const next = this.moved({ ...row, run: { ...row.run, agent: agent.name } }, "awaiting_human", { pending }, scope, actor, now, records);
    await this.k.commit(session, records, () => {
      this.k.inbox.save(item);
      this.store.save({ ...next, step: null });
      this.store.addEvents([traceEvent(next.run, "agent_start", agent.name, now, { executor: "human", outcome: "waiting for a person" })]);
      this.k.timers.schedule("inbox.expire", expires, { inbox_id: item.id }, { key: TIMER_KEYS.inbox(item.id) });
      this.k.timers.cancel(TIMER_KEYS.runResume);
    });
  }

  /** An inbox item's time ran out: a human turn fails the run; an escalation tells the agent nobody answered and the run goes on. */
  async expireItem(inboxId: string): Promise<void> {
    const item = this.k.inbox.get(inboxId);
    const session = this.k.store.load();
    if (!item || item.status !== "open" || !session) return;
    const now = this.k.now();
    const closed = closeItem(item, "expired", now)!;
    const scope = auditScope(session);
    const records: AuditRecord[] = [inboxItemClosed(scope, SYSTEM_ACTOR, now, { inbox_id: item.id, agent: item.agent, outcome: "expired", resolved_by: null })];
    const paused = this.pausedOn(item.id);
    let next: RunRow | null = null;
    const items: HistoryItem[] = [];
    if (paused) {
      const pending = paused.run.pending!;
      if (pending.tool_call_id === null) {
        next = this.moved(paused, "failed", { error: { code: "HUMAN_TIMEOUT", message: `Nobody answered '${pending.agent}' before ${pending.expires_at}.`, details: { inbox_id: item.id } } }, scope, SYSTEM_ACTOR, now, records);
      } else {
        items.push(escalationOutput(pending.agent, { id: pending.tool_call_id, name: "escalate_to_human", arguments: "{}" }, { answered: false, reason: "the inbox item expired" }));
        next = { ...this.moved(paused, "running", {}, scope, SYSTEM_ACTOR, now, records), step: "turn" };
      }
    }
    await this.k.commit(session.status === "active" ? session : session, records, () => {
      this.k.inbox.save(closed);
      this.append(session, items, SYSTEM_ACTOR, now);
      if (next) {
        this.store.save(next);
        if (next.run.status === "running") this.watch(next.run.id, now);
      }
    });
    if (next?.run.status === "running") void this.drive(next.run.id);
  }

  // ── Recovery ──────────────────────────────────────────────────────────────

  /**
   * A running run no loop drives here was left by a restart: resume it, or fail it past
   * MAX_RESUMES. `driving` when this instance's loop has it (the watchdog waits on).
   */
  async resumeOrphan(): Promise<"none" | "driving" | "resumed"> {
    const open = this.store.active();
    if (!open || open.run.status !== "running") return "none";
    if (this.driving.has(open.run.id)) return "driving";
    if (open.resumes >= MAX_RESUMES) {
      await this.finish(open.run.id, "failed", { error: { code: "RUN_INTERRUPTED", message: `The run was interrupted by ${open.resumes + 1} restarts and was not resumed again.` } }, SYSTEM_ACTOR);
      return "none";
    }
    const session = this.k.store.load();
    if (!session) return "none";
    const now = this.k.now();
    // Calls the interrupted step made and never answered are answered first, so the history stays well-formed.
    const answers = this.danglingAnswers(open, session);
    await this.k.commit(session, [], () => {
      this.append(session, answers, SYSTEM_ACTOR, now);
      this.store.save({ ...open, resumes: open.resumes + 1, step: null, run: { ...open.run, agent: session.current_agent } });
      this.store.addEvents([traceEvent(open.run, "agent_start", session.current_agent, now, { outcome: `resumed after a restart (${open.step ?? "between steps"})` })]);
      this.watch(open.run.id, now);
    });
    void this.drive(open.run.id);
    return "resumed";
  }

  /** True when a run is active but no loop drives it here (the sweep's question at start-up). */
  orphaned(): boolean {
    const open = this.store.active();
    return open !== null && open.run.status === "running" && !this.driving.has(open.run.id);
  }

  /** The timer that resumes a run if its loop dies with the instance. */
  watch(runId: string, now: number): void {
    this.k.timers.schedule("run.resume", now + WATCHDOG_MS, { run_id: runId }, { key: TIMER_KEYS.runResume });
  }

  /** Outputs for the last turn's tool calls that have none: a completed handoff says so, anything else was interrupted. */
  private danglingAnswers(row: RunRow, session: SessionRecord): HistoryItem[] {
    const history = this.k.store.history().map((h) => h.item);
    const answered = new Set(history.filter((i) => i.role === "tool").map((i) => i.tool_call_id));
    const last = history.findLast((i) => i.role === "assistant" && i.tool_calls?.length);
    if (!last?.tool_calls || !last.agent) return [];
    return last.tool_calls
      .filter((c) => !answered.has(c.id))
      .map((call) =>
        session.current_agent !== last.agent && (call.name.startsWith("transfer_to_") || call.name.startsWith("return_to_"))
          ? handoffOutput(last.agent!, call, { ok: true, target: session.current_agent })
          : { role: "tool" as const, agent: last.agent!, type: "tool_output" as const, tool_name: call.name, tool_call_id: call.id, content: "Error: interrupted by a restart; call it again if it is still needed." },
      );
    void row;
  }

  // ── Writing ───────────────────────────────────────────────────────────────

  /** Closes what the session's end leaves open (inside the ending transaction): the run fails, open items are cancelled. */
  onSessionEnd(session: SessionRecord, now: number, reason: string): void {
    if (!this.k.inbox) return;
    const scope = auditScope(session);
    const records: AuditRecord[] = [];
    for (const item of this.k.inbox.list("open")) {
      this.k.inbox.save(closeItem(item, "cancelled", now)!);
      this.k.timers.cancel(TIMER_KEYS.inbox(item.id));
      records.push(inboxItemClosed(scope, SYSTEM_ACTOR, now, { inbox_id: item.id, agent: item.agent, outcome: "cancelled", resolved_by: null }));
    }
    const open = this.store.active();
    if (open) {
      const code = reason === "session expired" ? "SESSION_EXPIRED" : "SESSION_NOT_FOUND";
      const next = this.moved(open, "failed", { error: { code, message: `The run ended with its session (${reason}).` } }, scope, SYSTEM_ACTOR, now, records);
      this.store.save(next);
      this.k.timers.cancel(TIMER_KEYS.runResume);
    }
    this.k.outbox.append(records);
  }

  /** Records the step about to be taken (and pushes the watchdog) before taking it. */
  private async record(row: RunRow, now: number): Promise<RunRow> {
    const next = { ...row, run: { ...row.run, updated_at: new Date(now).toISOString() } };
    this.k.transaction(() => {
      this.store.save(next);
      this.watch(row.run.id, now);
    });
    await this.k.timers.arm();
    return next;
  }

  /** One step: history items, the run row, its events and audit records, in one transaction. */
  private async commitStep(session: SessionRecord, row: RunRow, items: HistoryItem[], events: TraceEvent[], records: AuditRecord[], actor: Actor, now: number): Promise<void> {
    const next = { ...row, run: { ...row.run, updated_at: new Date(now).toISOString() } };
    await this.k.commit(touch(session, now), records, () => {
      this.append(session, items, actor, now);
      this.store.save(next);
      this.store.addEvents(events);
      this.watch(row.run.id, now);
    });
  }

  /** Ends a run (completed or failed), with its last items and events. */
  private async finish(runId: string, to: Extract<RunStatus, "completed" | "failed">, change: RunChange, actor: Actor = SYSTEM_ACTOR, agent?: string, events: TraceEvent[] = [], items: HistoryItem[] = []): Promise<void> {
    const row = this.store.get(runId);
    const session = this.k.store.load();
    if (!row || !isActiveRun(row.run.status) || !session) return;
    const now = this.k.now();
    const scope = auditScope(session);
    const records: AuditRecord[] = [];
    const next = this.moved(agent ? { ...row, run: { ...row.run, agent } } : row, to, change, scope, actor, now, records);
    await this.k.commit(session.status === "active" ? touch(session, now) : session, records, () => {
      this.append(session, items, actor, now);
      this.store.save({ ...next, step: null });
      this.store.addEvents(events);
      this.k.timers.cancel(TIMER_KEYS.runResume);
    });
  }

  /** The run moved by the transition table, its audit record added to `records`. */
  private moved(row: RunRow, to: RunStatus, change: RunChange, scope: ReturnType<typeof auditScope>, actor: Actor, now: number, records: AuditRecord[]): RunRow {
    const moved = moveRun(row.run, to, change, scope, actor, now);
    if (!moved) throw new Error(`run ${row.run.id}: ${row.run.status} → ${to} is not a transition`);
    records.push(moved.record);
    return { ...row, run: moved.run };
  }

  /** Appends items to the conversation, each with its audit record (content stays here). */
  private append(session: SessionRecord, items: readonly HistoryItem[], actor: Actor, now: number): void {
    const scope = auditScope(session);
    for (const [i, raw] of items.entries()) {
      const item = { ...raw, id: raw.id ?? `msg_${ulid(now)}`, created_at: raw.created_at ?? new Date(now).toISOString() };
      const seq = this.k.store.appendMessage(item as HistoryItem & { id: string }, now);
      const author = item.agent ?? null;
      this.k.outbox.append([
        messageAdded(scope, item.role === "user" ? actor : { actor: author ?? actor.actor, actor_type: author ? "agent" : actor.actor_type }, now, author ?? session.current_agent, {
          message_id: item.id,
          seq,
          role: item.role,
          author,
          chars: item.content.length,
        }),
      ]);
      void i;
    }
  }

  /** The run paused on this inbox item, if any. */
  private pausedOn(inboxId: string): RunRow | null {
    const open = this.store.active();
    return open?.run.status === "awaiting_human" && open.run.pending?.inbox_id === inboxId ? open : null;
  }

  private view(id: string): Run | null {
    const row = this.store.get(id);
    return row ? this.store.withEvents(row.run) : null;
  }

  /** after_turn: return_to_root — once a run completes, the session returns hop by hop to the agent it started with. */
  private async afterTurn(): Promise<void> {
    for (let hop = 0; hop < 50; hop++) {
      const session = this.k.store.load();
      if (!session || session.metadata.after_turn !== "return_to_root" || session.handoff_stack.length < 2) return;
      const back = await this.handoffs.start(
        { request: { session_id: session.id, source_agent: session.current_agent, mode: "return", policy: "immediate", reason: "after_turn: return_to_root", timeout_s: 300, on_timeout: "fail" } },
        SYSTEM_ACTOR,
      );
      if (!back.ok) {
        console.error(`session ${session.id}: return to the root failed`, back.error);
        return;
      }
    }
  }
}

/** The session's run limit: `max_turns` in its metadata (1–100), else DEFAULT_MAX_TURNS. */
function maxTurnsOf(session: SessionRecord): number {
  const value = session.metadata.max_turns;
  return typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= 100 ? value : DEFAULT_MAX_TURNS;
}

/** Tool arguments for the trace: parsed when they are JSON, else the text (cut). */
function safeArgs(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text.slice(0, 1000);
  }
}
