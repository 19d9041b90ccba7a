import { messageAdded } from "../src/audit/events";
import { handoffToolCalled, inboxItemClosed, inboxItemCreated, runStarted } from "../src/audit/run-events";
import { SYSTEM_ACTOR, type Actor, type AuditRecord } from "../src/audit/record";
import { err, ok, type ErrorBody, type Result } from "../src/errors";
import { ulid } from "../src/lib/ulid";
import type { AgentTurnResult } from "../src/runtime/agent-turn";
import { checkOutput, repairMessages } from "../src/runtime/guardrail";
import { callHttpTool, toolSecret } from "../src/runtime/http-tool";
import { liveApproval, liveMessage } from "../src/runtime/live-events";
import { closeItem, openItem } from "../src/runtime/inbox";
import { escalationOutput, handoffOutput, interpretTurn } from "../src/runtime/interpret";
import { isActiveRun, moveRun, newRun, newRunId, traceEvent, type RunChange } from "../src/runtime/run-record";
import { approvalPending, approvalPrompt, decideApproval, nextEffect, planWork, withApprovalsAsked, withCallsDone, type Denial } from "../src/runtime/tool-work";
import { callModel, planTurn, turnTimeoutMs, type TurnPlan } from "../src/runtime/turn";
import { callWebhookAgent, agentSecret } from "../src/runtime/webhook-agent";
import type { AgentTurnRequest } from "../src/runtime/agent-turn";
import type { AgentDefinition } from "../src/schemas/agent";
import type { HistoryItem } from "../src/schemas/handoff";
import type { MessageRun, ToolOutputsArgs } from "../src/rpc/session";
import type { InboxAnswer, InboxItem } from "../src/schemas/inbox";
import { TaskDecomposition, type Fanout } from "../src/schemas/collaboration";
import { DEFAULT_MAX_TURNS, type PendingCall, type Run, type RunStatus, type TraceEvent, type TracePage, type TurnWork, type WorkCall, type WorkHandoff } from "../src/schemas/run";
import { agentModels, type AgentModels } from "../src/services/agent-models";
import { agentDirectory, type AgentDirectory } from "../src/services/registry-cache";
import { toHistoryItem, touch, type SessionRecord } from "../src/sessions/model";
import { runPeerCall } from "./run-peers";
import { RunStore, type RunRow } from "./run-store";
import type { SessionHandoffs } from "./session-handoffs";
import { auditScope, type SessionKernel } from "./session-kernel";
import type { Sql } from "./sql";
import { TIMER_KEYS } from "./timer-kinds";

/**
 * The run feature of the SessionDO (design §4a): a user message runs the current agent's
 * turn, repeated while it calls tools and continued by the target after a handoff, until
 * a final answer, a pause (a person, an approval, the client's tool outputs), or
 * max_turns. The decisions are pure (src/runtime: what a turn is offered, what a response
 * means, what its tool calls need next, how a run moves); this is the glue: every step's
 * items, run record, trace events and audit records in one transaction, the external
 * calls (model, webhook, http tools, handoff engine) between them.
 *
 * - One run at a time: a message while one is running or paused is RUN_IN_PROGRESS.
 * - Each step is recorded before it is taken (`step`, and the response's `work`), so a
 *   restart resumes a run that was running (the sweep timer, or the next call) — at most
 *   MAX_RESUMES times, then it fails with RUN_INTERRUPTED. A run is never left `running`
 *   with nothing driving it; a paused run waits in storage, with a timer for its deadline.
 */

/** How long a request waits for its run before answering with the run still running (202). */
export const RUN_WAIT_MS = 25_000;
/** Restarts a run survives before it fails with RUN_INTERRUPTED. */
const MAX_RESUMES = 2;
/** Escalations wait this long for a person before the agent is told nobody answered. */
export const ESCALATION_TIMEOUT_MS = 24 * 3_600_000;
/** The watchdog: a running run's resume timer, pushed on while its loop makes progress. */
export const WATCHDOG_MS = 120_000;
/** How long a run in requires_action waits for the client's tool outputs (OpenAI's runs wait 10 minutes too). */
export const TOOL_OUTPUTS_TIMEOUT_MS = 10 * 60_000;

const agentActor = (agent: string): Actor => ({ actor: agent, actor_type: "agent" });

export class SessionRuns {
  readonly store: RunStore;
  /** Runs whose loop runs in this instance; an active run not in here was left by a restart. */
  private readonly driving = new Map<string, Promise<void>>();

  constructor(
    private readonly k: SessionKernel,
    private readonly handoffs: SessionHandoffs,
    sql: Sql,
    /** Told (inside the ending transaction) that a run ended: with its error code when it failed. */
    private readonly ended: (failedWith: string | null) => void = () => undefined,
    /** A supervisor's fan_out call: the session's fan-out feature runs it to its end. */
    private readonly fanOut: (runId: string, decomposition: TaskDecomposition, actor: Actor) => Promise<Result<Fanout>> = async () => err("INTERNAL", "fan-out is not wired"),
  ) {
    this.store = new RunStore(sql, k.liveEvents);
  }

  // ── Requests ──────────────────────────────────────────────────────────────

  /** A user message: stored, and it starts a run of the current agent; answered when the run ends or pauses (or after RUN_WAIT_MS). */
  async userMessage(content: string, actor: Actor): Promise<Result<MessageRun>> {
    const started = await this.startRun(content, actor);
    if (!started.ok) return started;
    await this.waitFor(started.value.run.id);
    return ok({ message: started.value.message, run: this.view(started.value.run.id)! });
  }

  /** The run a streamed message started goes on without a caller waiting. */
  driveInBackground(runId: string): void {
    void this.drive(runId);
  }

  /** What sendMessage answers once the run has stopped running (ended or paused); null while it runs. */
  settled(runId: string, message: HistoryItem): MessageRun | null {
    const row = this.store.get(runId);
    return !row || row.run.status === "running" ? null : { message, run: this.store.withEvents(row.run) };
  }

  /** A user message stored and its run recorded (not yet driven). */
  async startRun(content: string, actor: Actor): Promise<Result<MessageRun>> {
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
    let seq = 0;
    await this.k.commit(session, [runStarted(scope, actor, now, { run_id: run.id, agent: run.agent, message_id: item.id! })], () => {
      this.store.save({ run, step: null, resumes: 0, work: null });
      seq = this.k.store.appendMessage(item, now);
      this.k.outbox.append([messageAdded(scope, actor, now, session.current_agent, { message_id: item.id!, seq, role: "user", author: null, chars: content.length })]);
      this.k.liveEvents.append([liveMessage(session.id, run.id, item, now)]);
      // Made here, after the run's own event, so live subscribers see the run start first.
      this.store.addEvents([traceEvent(run, "agent_start", run.agent, now, { outcome: "run started" })]);
      this.watch(run.id, now);
    });
    await this.k.timers.arm();
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

  /**
   * A person's answer to an inbox item: a reply (a human turn, an escalation) or a decision
   * (an approval). Closes the item and moves the run it paused; answers once the run has
   * moved on (ended, paused again, or RUN_WAIT_MS later).
   */
  async resolve(inboxId: string, answer: InboxAnswer, actor: Actor): Promise<Result<{ item: InboxItem; run: Run | null }>> {
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    const item = this.k.inbox.get(inboxId);
    if (!item) return err("INBOX_ITEM_NOT_FOUND", `No inbox item '${inboxId}'.`, { inbox_id: inboxId });
    if (item.status !== "open") return err("INBOX_ITEM_CLOSED", `Inbox item '${inboxId}' is ${item.status}.`, { inbox_id: inboxId, status: item.status });
    const isApproval = item.kind === "approval";
    if (isApproval !== "decision" in answer) {
      return err("INBOX_ANSWER_MISMATCH", isApproval ? `Inbox item '${inboxId}' asks for an approval: answer { decision: "approve" | "deny", reason? }.` : `Inbox item '${inboxId}' asks a question: answer { reply }.`, {
        inbox_id: inboxId,
        kind: item.kind,
      });
    }
    if ("decision" in answer) return this.decide(item, answer.decision, { by: "person", reason: answer.reason }, actor, loaded.value);
    return this.answer(item, answer.reply, actor, loaded.value);
  }

  /** A reply to a question: closes the item and completes the run it paused, with the reply as the agent's output. */
  private async answer(item: InboxItem, reply: string, actor: Actor, loaded: SessionRecord): Promise<Result<{ item: InboxItem; run: Run | null }>> {
    const now = this.k.now();
    const closed = closeItem(item, "resolved", now, { reply, by: actor.actor })!;
    const session = touch(loaded, now);
    const scope = auditScope(session);
    const records = [inboxItemClosed(scope, actor, now, { inbox_id: item.id, agent: item.agent, outcome: "resolved", resolved_by: actor.actor })];
    const paused = this.pausedOn(item.id);
    const items: HistoryItem[] = [];
    let next: RunRow | null = null;
    if (paused?.run.pending?.kind === "human") {
      const { agent, tool_call_id: call } = paused.run.pending;
      if (call !== null) items.push(escalationOutput(agent, { id: call, name: "escalate_to_human", arguments: "{}" }, { answered: true, text: reply }));
      items.push({ role: "assistant", agent, type: "message", content: reply });
      next = this.moved(paused, "completed", { output: reply, output_agent: agent }, scope, actor, now, records);
      next.run = { ...next.run, agent };
    }
    await this.k.commit(session, records, () => {
      this.k.inbox.save(closed);
      this.append(session, items, actor, now, paused?.run.id ?? null);
      if (next) {
        this.store.save({ ...next, work: null });
        this.store.addEvents([traceEvent(next.run, "agent_complete", next.run.agent, now, { executor: "human", outcome: "answered from the inbox" })]);
      }
      this.k.timers.cancel(TIMER_KEYS.inbox(item.id));
    });
    return ok({ item: closed, run: next ? this.view(next.run.id) : null });
  }

  /**
   * A decision on an approval (a person's, or the alarm's deny): the call runs or gets the
   * denial as its output; once every call of the pause is decided the run goes on.
   */
  private async decide(item: InboxItem, decision: "approve" | "deny", denial: Denial, actor: Actor, loaded: SessionRecord): Promise<Result<{ item: InboxItem; run: Run | null }>> {
    const now = this.k.now();
    const expired = denial.by === "timeout";
    const closed = closeItem(item, expired ? "expired" : "resolved", now, expired ? undefined : { reply: denial.by === "person" ? (denial.reason ?? null) : null, decision, by: actor.actor })!;
    const session = loaded.status === "active" ? touch(loaded, now) : loaded;
    const scope = auditScope(session);
    const records: AuditRecord[] = [inboxItemClosed(scope, actor, now, { inbox_id: item.id, agent: item.agent, outcome: expired ? "expired" : "resolved", resolved_by: expired ? null : actor.actor })];
    const paused = this.pausedOn(item.id);
    const decided = paused?.work ? decideApproval(paused.work, item.id, decision, denial) : null;
    let next: RunRow | null = null;
    const items: HistoryItem[] = [];
    const events: TraceEvent[] = [];
    if (paused && decided) {
      if (decided.output) items.push(decided.output);
      const outcome = decision === "approve" ? `approved by ${actor.actor}` : expired ? `denied: nobody approved it within ${(denial as { timeout_s: number }).timeout_s} s` : `denied by ${actor.actor}`;
      events.push(traceEvent(paused.run, "tool_call", decided.work.agent, now, { tool_name: decided.call.name, tool_args: safeArgs(decided.call.arguments), outcome }));
      const work = decided.work;
      if (nextEffect(work).type === "await_approval") {
        const pending = approvalPending(work, paused.run.pending?.expires_at ?? new Date(now).toISOString());
        next = { ...paused, work, run: { ...paused.run, pending, updated_at: new Date(now).toISOString() } };
      } else {
        next = { ...this.moved(paused, "running", {}, scope, actor, now, records), work, step: "tools" };
      }
    }
    await this.k.commit(session, records, () => {
      this.k.inbox.save(closed);
      this.append(session, items, agentActor(item.agent ?? "system"), now, paused?.run.id ?? null);
      this.k.timers.cancel(TIMER_KEYS.inbox(item.id));
      if (next) {
        this.store.save(next);
        this.store.addEvents(events);
        if (next.run.status === "running") this.watch(next.run.id, now);
      }
    });
    if (next?.run.status === "running") await this.waitFor(next.run.id);
    return ok({ item: closed, run: next ? this.view(next.run.id) : null });
  }

  /**
   * The client's outputs for a run in requires_action: exactly one per pending call, else
   * TOOL_OUTPUTS_MISMATCH and nothing changes. Answers once the run has moved on.
   */
  async toolOutputs(args: ToolOutputsArgs, actor: Actor): Promise<Result<{ run: Run }>> {
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    const paused = this.store.active();
    if (!paused || paused.run.status !== "requires_action" || paused.run.pending?.kind !== "client_tools" || !paused.work) {
      return err("RUN_NOT_AWAITING_OUTPUTS", "No run of this session is waiting for tool outputs.", paused ? { run_id: paused.run.id, status: paused.run.status } : {});
    }
    if (args.run_id !== undefined && args.run_id !== paused.run.id) {
      return err("RUN_NOT_AWAITING_OUTPUTS", `Run '${args.run_id}' is not the run waiting for tool outputs.`, { run_id: args.run_id, waiting: paused.run.id });
    }
    const expected = new Map(paused.run.pending.tool_calls.map((c) => [c.id, c]));
    const seen = new Set<string>();
    const duplicate: string[] = [];
    const unknown: string[] = [];
    for (const o of args.outputs) {
      if (seen.has(o.tool_call_id)) duplicate.push(o.tool_call_id);
      else if (!expected.has(o.tool_call_id)) unknown.push(o.tool_call_id);
      seen.add(o.tool_call_id);
    }
    const missing = [...expected.keys()].filter((id) => !seen.has(id));
    if (duplicate.length + unknown.length + missing.length > 0) {
      return err("TOOL_OUTPUTS_MISMATCH", "Post exactly one output for each pending tool call.", {
        run_id: paused.run.id,
        expected: [...expected.keys()],
        ...(missing.length ? { missing } : {}),
        ...(unknown.length ? { unknown } : {}),
        ...(duplicate.length ? { duplicate } : {}),
      });
    }
    const now = this.k.now();
    const session = touch(loaded.value, now);
    const scope = auditScope(session);
    const agent = paused.work.agent;
    const items: HistoryItem[] = args.outputs.map((o) => ({ role: "tool", agent, type: "tool_output", tool_name: expected.get(o.tool_call_id)!.name, tool_call_id: o.tool_call_id, content: o.output }));
    const events = args.outputs.map((o) => traceEvent(paused.run, "tool_call", agent, now, { tool_name: expected.get(o.tool_call_id)!.name, outcome: "output from the client" }));
    const records: AuditRecord[] = [];
    const next: RunRow = { ...this.moved(paused, "running", {}, scope, actor, now, records), work: withCallsDone(paused.work, seen), step: "tools" };
    await this.k.commit(session, records, () => {
      this.append(session, items, actor, now, next.run.id);
      this.store.save(next);
      this.store.addEvents(events);
      this.k.timers.cancel(TIMER_KEYS.toolOutputs);
      this.watch(next.run.id, now);
    });
    await this.waitFor(next.run.id);
    return ok({ run: this.view(next.run.id)! });
  }

  // ── The loop ──────────────────────────────────────────────────────────────

  /** Drives the run until it ends or pauses, or RUN_WAIT_MS passes (the loop goes on). */
  private async waitFor(runId: string): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.drive(runId), new Promise((resolve) => (timer = setTimeout(resolve, RUN_WAIT_MS)))]);
    clearTimeout(timer);
  }

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
      let directory: AgentDirectory;
      try {
        directory = await agentDirectory(this.k.env.DB, session.tenant);
      } catch (error) {
        await this.finish(runId, "failed", { error: { code: "DEPENDENCY_UNAVAILABLE", message: "The agent registry could not be read.", details: { reason: String(error) } } });
        return;
      }
      const agent = directory.byName.get(session.current_agent);
      if (!agent || !agent.enabled) {
        const error: ErrorBody = agent
          ? { code: "AGENT_UNAVAILABLE", message: `Agent '${session.current_agent}' is disabled.`, details: { agent: session.current_agent, reason: "disabled" } }
          : { code: "AGENT_NOT_FOUND", message: `Agent '${session.current_agent}' is not in the registry.`, details: { agent: session.current_agent } };
        await this.finish(runId, "failed", { error }, SYSTEM_ACTOR, session.current_agent);
        return;
      }
      if (row.work) {
        if (!(await this.carryOut(row, row.work, agent, directory))) return;
        continue;
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

  /** Sends one turn to whoever executes the agent: its webhook, or the model provider. */
  private async execute(agent: AgentDefinition, request: AgentTurnRequest, models: AgentModels) {
    const timeout = turnTimeoutMs(agent);
    if (agent.kind === "webhook") {
      return callWebhookAgent({ name: agent.name, endpoint: agent.endpoint! }, request, { secret: agentSecret(this.k.env as unknown as Record<string, unknown>, agent.name), timeoutMs: timeout });
    }
    if (!models.provider.ok) return { ok: false as const, code: "DEPENDENCY_UNAVAILABLE" as const, message: models.provider.error.message, duration_ms: 0 };
    return callModel(models.provider.value, request, timeout);
  }

  /** One turn of a model or webhook agent; false when the run ended or paused. */
  private async turn(row: RunRow, session: SessionRecord, agent: AgentDefinition, directory: AgentDirectory): Promise<boolean> {
    const now = this.k.now();
    const models = await agentModels(this.k.env, session.tenant);
    const plan = planTurn({
      run_id: row.run.id,
      agent,
      directory: directory.byName,
      registry_tools: directory.tools,
      session,
      history: this.k.store.history(),
      default_model: models.default_model,
    });
    const started = await this.record({ ...row, run: { ...row.run, agent: agent.name, turns: row.run.turns + 1 }, step: "turn" }, now);
    const result = await this.execute(agent, plan.request, models);
    const after = this.k.now();
    const executor = agent.kind === "webhook" ? "webhook" : "model";
    if (!result.ok) {
      const event = traceEvent(started.run, "agent_error", agent.name, after, { executor, model: plan.request.model }, result.duration_ms, result.code);
      await this.finish(row.run.id, "failed", { error: { code: result.code, message: result.message } }, undefined, agent.name, [event]);
      return false;
    }
    const decision = interpretTurn(agent.name, result.response, plan.tools);
    const usage = result.response.usage;
    // Registry tool calls get their trace event when they run (or are decided); the rest now.
    const runLater = new Set(decision.calls.map((c) => c.call.id));
    const events: TraceEvent[] = [
      traceEvent(started.run, "llm_call", agent.name, after, {
        executor,
        model: result.model,
        ...(usage ? { tokens: { prompt: usage.prompt_tokens, completion: usage.completion_tokens, total: usage.total_tokens } } : {}),
      }, result.duration_ms),
      ...result.response.tool_calls.filter((c) => !runLater.has(c.id)).map((call) => traceEvent(started.run, "tool_call", agent.name, after, { tool_name: call.name, tool_args: safeArgs(call.arguments) })),
    ];
    if (decision.action.type === "final") return this.complete(started, agent, decision.action.output, decision.assistant, events, { plan, models });
    // The session may have ended while the agent was thinking: its answer goes nowhere.
    const current = this.k.store.load();
    if (!current || current.status !== "active" || this.store.get(row.run.id)?.run.status !== "running") return false;
    const work = planWork(agent, decision);
    await this.commitStep(current, { ...started, step: work ? "tools" : "turn", work }, [decision.assistant, ...decision.outputs], events, [], agentActor(agent.name), this.k.now());
    return true;
  }

  /**
   * A final answer: through the agent's output guardrail (reject, one repair, or warn), then
   * the run completes (or fails with GUARDRAIL_FAILED).
   */
  private async complete(row: RunRow, agent: AgentDefinition, output: string, assistant: HistoryItem, events: TraceEvent[], turn: { plan: TurnPlan; models: AgentModels }): Promise<boolean> {
    const session = this.k.store.load();
    if (!session || session.status !== "active" || this.store.get(row.run.id)?.run.status !== "running") return false;
    const actor = agentActor(agent.name);
    const guard = agent.guardrails;
    let check = checkOutput(agent, output);
    let answer = { output, assistant };
    let current = row;
    const guardEvent = (outcome: string, errors?: string[]) =>
      traceEvent(current.run, "guardrail", agent.name, this.k.now(), { outcome, ...(errors ? { tool_args: { errors } } : {}) }, 0, errors ? "GUARDRAIL_FAILED" : null);
    if (guard?.output_schema && check.ok) events.push(guardEvent("passed"));
    if (!check.ok && guard?.on_failure === "repair") {
      events.push(guardEvent("repair requested", check.errors));
      current = await this.record({ ...row, run: { ...row.run, turns: row.run.turns + 1 } }, this.k.now());
      const request = { ...turn.plan.request, messages: [...turn.plan.request.messages, ...repairMessages(output, check.errors)] };
      const repaired = await this.execute(agent, request, turn.models);
      if (repaired.ok) {
        events.push(traceEvent(current.run, "llm_call", agent.name, this.k.now(), { executor: agent.kind === "webhook" ? "webhook" : "model", model: repaired.model, outcome: "repair" }, repaired.duration_ms));
        const text = repaired.response.tool_calls.length === 0 ? (repaired.response.content ?? "") : "";
        answer = { output: text, assistant: { role: "assistant", agent: agent.name, type: "message", content: text } };
        check = repaired.response.tool_calls.length === 0 ? checkOutput(agent, text) : { ok: false, errors: ["the repair called tools instead of answering"] };
        if (check.ok) events.push(guardEvent("repaired"));
      } else {
        check = { ok: false, errors: [`the repair call failed (${repaired.code}): ${repaired.message}`] };
      }
    }
    if (!check.ok && guard?.on_failure === "warn") {
      events.push(guardEvent("warned", check.errors));
      events.push(traceEvent(current.run, "agent_complete", agent.name, this.k.now(), { outcome: "final answer (guardrail warning)" }));
      const warning = { code: "GUARDRAIL_FAILED", message: "The output does not match the agent's output_schema.", details: { errors: check.errors } };
      await this.finish(row.run.id, "completed", { output: answer.output, output_agent: agent.name, warnings: [warning] }, actor, agent.name, events, [answer.assistant], current);
      await this.afterTurn();
      return false;
    }
    if (!check.ok) {
      events.push(guardEvent(guard?.on_failure === "repair" ? "rejected after repair" : "rejected", check.errors));
      const error = { code: "GUARDRAIL_FAILED" as const, message: "The agent's output does not match its output_schema.", details: { errors: check.errors } };
      await this.finish(row.run.id, "failed", { error }, actor, agent.name, events, [], current);
      return false;
    }
    events.push(traceEvent(current.run, "agent_complete", agent.name, this.k.now(), { outcome: "final answer" }));
    await this.finish(row.run.id, "completed", { output: answer.output, output_agent: agent.name }, actor, agent.name, events, [answer.assistant], current);
    await this.afterTurn();
    return false;
  }

  /** The next step of a response's tool calls; false when the run paused or ended. */
  private async carryOut(row: RunRow, work: TurnWork, agent: AgentDefinition, directory: AgentDirectory): Promise<boolean> {
    const effect = nextEffect(work);
    switch (effect.type) {
      case "ask_approval":
        await this.askApproval(row, work, effect.calls, agent);
        return false;
      case "await_approval":
        // Approvals were asked but the run is running (a restart between the two): pause it again.
        await this.pause(row, work, "awaiting_approval", approvalPending(work, new Date(this.k.now() + agent.tools.confirmation.timeout_s * 1000).toISOString()));
        return false;
      case "run_calls":
        await this.runCalls(row, work, effect.calls, agent, directory);
        return true;
      case "await_client": {
        const expires = new Date(this.k.now() + TOOL_OUTPUTS_TIMEOUT_MS).toISOString();
        await this.pause(row, work, "requires_action", { kind: "client_tools", agent: work.agent, tool_calls: effect.calls.map(pendingCall), expires_at: expires }, () =>
          this.k.timers.schedule("run.outputs_expire", Date.parse(expires), { run_id: row.run.id }, { key: TIMER_KEYS.toolOutputs }),
        );
        return false;
      }
      case "handoff":
        if (effect.handoff.type === "escalate") {
          const session = this.k.store.load()!;
          await this.commitStep(session, { ...row, step: "turn", work: null }, [], [], [], agentActor(agent.name), this.k.now());
          await this.awaitHuman(this.store.get(row.run.id)!, this.k.store.load()!, agent, effect.handoff.id, effect.handoff.reason);
          return false;
        }
        return this.handoff(row, work, effect.handoff, agent);
      case "done":
        await this.commitStep(this.k.store.load()!, { ...row, step: "turn", work: null }, [], [], [], agentActor(agent.name), this.k.now());
        return true;
    }
  }

  /** Pauses the run (approvals, client tools) with what it waits for. */
  private async pause(row: RunRow, work: TurnWork, to: "awaiting_approval" | "requires_action", pending: NonNullable<Run["pending"]>, extra?: () => void, records: AuditRecord[] = [], before?: () => void): Promise<void> {
    const session = this.k.store.load()!;
    const now = this.k.now();
    const next = this.moved(row, to, { pending }, auditScope(session), agentActor(work.agent), now, records);
    await this.k.commit(session, records, () => {
      before?.();
      this.store.save({ ...next, work, step: null });
      this.k.timers.cancel(TIMER_KEYS.runResume);
      extra?.();
    });
  }

  /** Opens an inbox item per call that needs approval, and pauses the run in awaiting_approval. */
  private async askApproval(row: RunRow, work: TurnWork, calls: PendingCall[], agent: AgentDefinition): Promise<void> {
    const session = this.k.store.load()!;
    const now = this.k.now();
    const expires = now + agent.tools.confirmation.timeout_s * 1000;
    const scope = auditScope(session);
    const actor = agentActor(agent.name);
    const items = calls.map((call) =>
      openItem({
        kind: "approval",
        session_id: session.id,
        agent: agent.name,
        run_id: row.run.id,
        reason: approvalPrompt(agent, call),
        details: { tool_call_id: call.id, tool_name: call.name, arguments: safeArgs(call.arguments) },
        now,
        expires_at: expires,
      }),
    );
    const asked = withApprovalsAsked(work, new Map(items.map((item, i) => [calls[i]!.id, item.id])));
    const records: AuditRecord[] = items.map((item) =>
      inboxItemCreated(scope, actor, now, { inbox_id: item.id, kind: "approval", agent: agent.name, run_id: row.run.id, handoff_id: null, reason: item.reason, expires_at: item.expires_at }),
    );
    const events = calls.map((call) => traceEvent(row.run, "tool_call", agent.name, now, { tool_name: call.name, tool_args: safeArgs(call.arguments), outcome: "approval required" }));
    await this.pause(row, asked, "awaiting_approval", approvalPending(asked, new Date(expires).toISOString()), undefined, records, () => {
      for (const [i, item] of items.entries()) {
        this.k.inbox.save(item);
        this.k.timers.schedule("inbox.expire", expires, { inbox_id: item.id }, { key: TIMER_KEYS.inbox(item.id) });
        const call = calls[i]!;
        this.k.liveEvents.append([liveApproval(session.id, row.run.id, now, { inbox_id: item.id, tool_name: call.name, arguments: safeArgs(call.arguments), prompt: item.reason, expires_at: item.expires_at })]);
      }
      this.store.addEvents(events);
    });
  }

  /** Runs the calls Relay runs (http tools, messages to other agents), side by side, each within its own deadline; their outputs go in. */
  private async runCalls(row: RunRow, work: TurnWork, calls: WorkCall[], agent: AgentDefinition, directory: AgentDirectory): Promise<void> {
    const tenant = this.k.store.load()?.tenant ?? "";
    const models = calls.some((c) => c.kind !== "http") ? await agentModels(this.k.env, tenant) : null;
    const results = await Promise.all(
      calls.map(async (call) => {
        if (call.kind === "fan_out") return { call, ...(await this.fanOutCall(row.run.id, work.agent, call)) };
        if (call.kind !== "http") {
          return { call, ...(await runPeerCall({ env: this.k.env, tenant, session_id: row.run.session_id, agent, directory: directory.byName, models: models! }, call)) };
        }
        const tool = directory.tools.get(call.name);
        if (!tool || tool.kind !== "http") return { call, ok: false, output: `Error: the tool '${call.name}' is no longer in the registry; it was not run.`, duration_ms: 0 };
        const result = await callHttpTool(tool, { session_id: row.run.session_id, run_id: row.run.id, agent: work.agent, call }, { secret: toolSecret(this.k.env as unknown as Record<string, unknown>, tool.name) });
        return { call, ...result };
      }),
    );
    const session = this.k.store.load();
    if (!session || session.status !== "active" || this.store.get(row.run.id)?.run.status !== "running") return;
    const now = this.k.now();
    const items: HistoryItem[] = results.map((r) => ({ role: "tool", agent: work.agent, type: "tool_output", tool_name: r.call.name, tool_call_id: r.call.id, content: r.output }));
    const events = results.map((r) =>
      traceEvent(row.run, "tool_call", work.agent, now, { tool_name: r.call.name, tool_args: safeArgs(r.call.arguments), outcome: r.ok ? "ok" : "error" }, r.duration_ms, r.ok ? null : r.output.slice(0, 300)),
    );
    const fresh = this.store.get(row.run.id)!;
    await this.commitStep(session, { ...fresh, work: withCallsDone(work, new Set(calls.map((c) => c.id))), step: "tools" }, items, events, [], agentActor(work.agent), now);
  }

  /** A fan_out call: its tasks run to the end of the fan-out; the aggregate (or what failed) is the output. */
  private async fanOutCall(runId: string, agent: string, call: WorkCall): Promise<{ ok: boolean; output: string; duration_ms: number }> {
    const started = Date.now();
    const args = JSON.parse(call.arguments || "{}") as { tasks?: { agent: string; instruction: string }[] };
    const tasks = (args.tasks ?? []).map((t, i) => ({ task_id: `task_${i + 1}`, agent: t.agent, instruction: t.instruction }));
    const decomposition = TaskDecomposition.safeParse({ original_query: tasks.map((t) => t.instruction).join("\n"), tasks });
    if (!decomposition.success) return { ok: false, output: "Error: the tasks are not a valid decomposition.", duration_ms: 0 };
    const result = await this.fanOut(runId, decomposition.data, agentActor(agent));
    const duration_ms = Date.now() - started;
    if (!result.ok) return { ok: false, output: `Error: the fan-out was refused (${result.error.code}): ${result.error.message}`, duration_ms };
    const f = result.value;
    if (f.state === "COMPLETED") return { ok: true, output: f.response ?? "", duration_ms };
    return { ok: false, output: `Error: the fan-out failed (${f.results.filter((r) => !r.success).map((r) => `${r.agent}: ${r.error}`).join(", ")}). What came back: ${JSON.stringify(f.results.filter((r) => r.success).map((r) => ({ agent: r.agent, data: r.data })))}`, duration_ms };
  }

  /** The work's transfer or return: through the handoff engine, then the call's output. */
  private async handoff(row: RunRow, work: TurnWork, call: WorkHandoff, agent: AgentDefinition): Promise<boolean> {
    const actor = agentActor(agent.name);
    let session = this.k.store.load()!;
    await this.commitStep(session, { ...row, step: "handoff" }, [], [], [], actor, this.k.now());
    const target = call.target;
    const started = await this.handoffs.start(
      {
        request: {
          session_id: session.id,
          source_agent: agent.name,
          ...(call.type === "transfer" && target ? { target_agent: target } : {}),
          mode: call.type === "transfer" ? "transfer" : "return",
          policy: "immediate",
          reason: call.reason,
          ...(call.input === undefined ? {} : { payload: { input: call.input } }),
          timeout_s: 300,
          on_timeout: "fail",
        },
        hidden_calls: work.hidden_calls,
      },
      actor,
    );
    const now = this.k.now();
    session = this.k.store.load()!;
    const fresh = this.store.get(row.run.id)!;
    const outcome = started.ok
      ? ({ ok: true, target: target ?? session.current_agent } as const)
      : { ok: false as const, code: started.error.code, message: started.error.message, allowed: (started.error.details as { allowed?: string[] } | undefined)?.allowed ?? agent.handoffs.map((h) => h.to) };
    const output = handoffOutput(agent.name, call, outcome);
    const event = traceEvent(fresh.run, "handoff", agent.name, now, {
      from_agent: agent.name,
      ...(target ? { to_agent: target } : {}),
      handoff_reason: call.reason,
      tool_name: call.name,
      outcome: started.ok ? "completed" : started.error.code,
    }, 0, started.ok ? null : started.error.code);
    const audit = handoffToolCalled(auditScope(session), actor, now, {
      run_id: row.run.id,
      agent: agent.name,
      tool_name: call.name,
      target,
      accepted: started.ok,
      ...(started.ok ? {} : { error_code: started.error.code }),
    });
    const next: RunRow = {
      ...fresh,
      step: "turn",
      work: null,
      run: { ...fresh.run, agent: session.current_agent, handoffs: started.ok ? [...fresh.run.handoffs, started.value.handoff.id] : fresh.run.handoffs },
    };
    const events = started.ok ? [event, traceEvent(next.run, "agent_start", session.current_agent, now, { from_agent: agent.name, outcome: "handed the conversation" })] : [event];
    await this.commitStep(session, next, [output], events, [audit], actor, now);
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
    const actor: Actor = callId === null ? SYSTEM_ACTOR : agentActor(agent.name);
    const records: AuditRecord[] = [
      inboxItemCreated(scope, actor, now, { inbox_id: item.id, kind: item.kind, agent: agent.name, run_id: row.run.id, handoff_id: null, reason, expires_at: item.expires_at }),
    ];
    const pending = { kind: "human" as const, inbox_id: item.id, agent: agent.name, tool_call_id: callId, expires_at: item.expires_at! };
    const next = this.moved({ ...row, run: { ...row.run, agent: agent.name } }, "awaiting_human", { pending }, scope, actor, now, records);
    await this.k.commit(session, records, () => {
      this.k.inbox.save(item);
      this.store.save({ ...next, step: null, work: null });
      this.store.addEvents([traceEvent(next.run, "agent_start", agent.name, now, { executor: "human", outcome: "waiting for a person" })]);
      this.k.timers.schedule("inbox.expire", expires, { inbox_id: item.id }, { key: TIMER_KEYS.inbox(item.id) });
      this.k.timers.cancel(TIMER_KEYS.runResume);
    });
  }

  /**
   * An inbox item's time ran out: a human turn fails the run; an escalation tells the agent
   * nobody answered and the run goes on; an approval is denied.
   */
  async expireItem(inboxId: string): Promise<void> {
    const item = this.k.inbox.get(inboxId);
    const session = this.k.store.load();
    if (!item || item.status !== "open" || !session) return;
    if (item.kind === "approval") {
      const agent = this.pausedOn(item.id)?.work?.agent;
      const directory = agent ? await agentDirectory(this.k.env.DB, session.tenant).catch(() => null) : null;
      const timeout_s = directory?.byName.get(agent!)?.tools.confirmation.timeout_s ?? Math.round((Date.parse(item.expires_at ?? item.created_at) - Date.parse(item.created_at)) / 1000);
      await this.decide(item, "deny", { by: "timeout", timeout_s }, SYSTEM_ACTOR, session);
      return;
    }
    const now = this.k.now();
    const closed = closeItem(item, "expired", now)!;
    const scope = auditScope(session);
    const records: AuditRecord[] = [inboxItemClosed(scope, SYSTEM_ACTOR, now, { inbox_id: item.id, agent: item.agent, outcome: "expired", resolved_by: null })];
    const paused = this.pausedOn(item.id);
    let next: RunRow | null = null;
    const items: HistoryItem[] = [];
    if (paused?.run.pending?.kind === "human") {
      const pending = paused.run.pending;
      if (pending.tool_call_id === null) {
        next = this.moved(paused, "failed", { error: { code: "HUMAN_TIMEOUT", message: `Nobody answered '${pending.agent}' before ${pending.expires_at}.`, details: { inbox_id: item.id } } }, scope, SYSTEM_ACTOR, now, records);
      } else {
        items.push(escalationOutput(pending.agent, { id: pending.tool_call_id, name: "escalate_to_human", arguments: "{}" }, { answered: false, reason: "the inbox item expired" }));
        next = { ...this.moved(paused, "running", {}, scope, SYSTEM_ACTOR, now, records), step: "turn" };
      }
    }
    await this.k.commit(session, records, () => {
      this.k.inbox.save(closed);
      this.append(session, items, SYSTEM_ACTOR, now, paused?.run.id ?? null);
      if (next) {
        this.store.save(next);
        if (next.run.status === "running") this.watch(next.run.id, now);
      }
    });
    if (next?.run.status === "running") void this.drive(next.run.id);
  }

  /** A run in requires_action whose outputs never came: it fails with TOOL_OUTPUTS_TIMEOUT. */
  async expireToolOutputs(runId: string): Promise<void> {
    const row = this.store.get(runId);
    if (row?.run.status !== "requires_action") return;
    await this.finish(runId, "failed", { error: { code: "TOOL_OUTPUTS_TIMEOUT", message: `No tool outputs were posted before ${row.run.pending?.expires_at}.`, details: { run_id: runId } } }, SYSTEM_ACTOR);
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
    // What the interrupted step left unanswered is answered first, so the history stays well-formed.
    const { answers, work } = this.interrupted(open, session);
    await this.k.commit(session, [], () => {
      this.append(session, answers, SYSTEM_ACTOR, now, open.run.id);
      this.store.save({ ...open, resumes: open.resumes + 1, step: null, work, run: { ...open.run, agent: session.current_agent } });
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

  /**
   * What a restart leaves of the step under way. With work: http calls that may have run are
   * answered "interrupted" (never repeated: they may have had effects), and a handoff under
   * way is answered by where the session is now; the rest of the work goes on. Without (a run
   * from before work was kept): every unanswered call of the last response is answered.
   */
  private interrupted(row: RunRow, session: SessionRecord): { answers: HistoryItem[]; work: TurnWork | null } {
    const interrupted = (agent: string, call: PendingCall): HistoryItem => ({ role: "tool", agent, type: "tool_output", tool_name: call.name, tool_call_id: call.id, content: "Error: interrupted by a restart; call it again if it is still needed." });
    const handedOver = (agent: string, call: PendingCall) => session.current_agent !== agent && (call.name.startsWith("transfer_to_") || call.name.startsWith("return_to_"));
    const work = row.work;
    if (work) {
      const answers: HistoryItem[] = [];
      let next = work;
      if (row.step === "tools") {
        const ran = work.calls.filter((c) => c.kind === "http" && !c.done && (c.approval === "none" || c.approval === "approved"));
        answers.push(...ran.map((c) => interrupted(work.agent, c)));
        next = withCallsDone(work, new Set(ran.map((c) => c.id)));
      }
      if (row.step === "handoff" && work.handoff) {
        const call = work.handoff;
        answers.push(handedOver(work.agent, call) ? handoffOutput(work.agent, call, { ok: true, target: session.current_agent }) : interrupted(work.agent, call));
        next = { ...next, handoff: null };
      }
      return { answers, work: next };
    }
    const history = this.k.store.history().map((h) => h.item);
    const answered = new Set(history.filter((i) => i.role === "tool").map((i) => i.tool_call_id));
    const last = history.findLast((i) => i.role === "assistant" && i.tool_calls?.length);
    if (!last?.tool_calls || !last.agent) return { answers: [], work: null };
    const agent = last.agent;
    return {
      answers: last.tool_calls.filter((c) => !answered.has(c.id)).map((call) => (handedOver(agent, call) ? handoffOutput(agent, call, { ok: true, target: session.current_agent }) : interrupted(agent, call))),
      work: null,
    };
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
      this.store.save({ ...next, work: null });
      this.k.timers.cancel(TIMER_KEYS.runResume);
      this.k.timers.cancel(TIMER_KEYS.toolOutputs);
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
      this.append(session, items, actor, now, row.run.id);
      this.store.save(next);
      this.store.addEvents(events);
      this.watch(row.run.id, now);
    });
  }

  /** Ends a run (completed or failed), with its last items and events; `base` is the row as the caller last recorded it. */
  private async finish(runId: string, to: Extract<RunStatus, "completed" | "failed">, change: RunChange, actor: Actor = SYSTEM_ACTOR, agent?: string, events: TraceEvent[] = [], items: HistoryItem[] = [], base?: RunRow): Promise<void> {
    const stored = this.store.get(runId);
    const session = this.k.store.load();
    if (!stored || !isActiveRun(stored.run.status) || !session) return;
    const row = base && base.run.status === stored.run.status ? base : stored;
    const now = this.k.now();
    const scope = auditScope(session);
    const records: AuditRecord[] = [];
    const next = this.moved(agent ? { ...row, run: { ...row.run, agent } } : row, to, change, scope, actor, now, records);
    await this.k.commit(session.status === "active" ? touch(session, now) : session, records, () => {
      this.append(session, items, actor, now, runId);
      this.store.save({ ...next, step: null, work: null });
      this.store.addEvents(events);
      this.k.timers.cancel(TIMER_KEYS.runResume);
      this.k.timers.cancel(TIMER_KEYS.toolOutputs);
      if (session.status === "active") this.ended(to === "failed" ? (change.error?.code ?? "INTERNAL") : null);
    });
  }

  /** The run moved by the transition table, its audit record added to `records`. */
  private moved(row: RunRow, to: RunStatus, change: RunChange, scope: ReturnType<typeof auditScope>, actor: Actor, now: number, records: AuditRecord[]): RunRow {
    const moved = moveRun(row.run, to, change, scope, actor, now);
    if (!moved) throw new Error(`run ${row.run.id}: ${row.run.status} → ${to} is not a transition`);
    records.push(moved.record);
    return { ...row, run: moved.run };
  }

  /** Appends items to the conversation, each with its audit record (content stays here) and its live event. */
  private append(session: SessionRecord, items: readonly HistoryItem[], actor: Actor, now: number, runId: string | null): void {
    const scope = auditScope(session);
    for (const raw of items) {
      const item = { ...raw, id: raw.id ?? `msg_${ulid(now)}`, created_at: raw.created_at ?? new Date(now).toISOString() };
      const seq = this.k.store.appendMessage(item as HistoryItem & { id: string }, now);
      this.k.liveEvents.append([liveMessage(session.id, runId, item, now)]);
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
    }
  }

  /** The run paused on this inbox item, if any. */
  private pausedOn(inboxId: string): RunRow | null {
    const open = this.store.active();
    const pending = open?.run.pending;
    if (!open || !pending) return null;
    if (pending.kind === "human") return open.run.status === "awaiting_human" && pending.inbox_id === inboxId ? open : null;
    if (pending.kind === "approval") return open.run.status === "awaiting_approval" && pending.approvals.some((a) => a.inbox_id === inboxId) ? open : null;
    return null;
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

const pendingCall = (c: PendingCall): PendingCall => ({ id: c.id, name: c.name, arguments: c.arguments });

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
