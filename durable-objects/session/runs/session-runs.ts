import { type Actor, type AuditRecord, agentActor, SYSTEM_ACTOR } from "../../../src/audit/record";
import { inboxItemClosed, runStarted } from "../../../src/audit/run-events";
import { err, ok, type Result } from "../../../src/errors";
import { ulid } from "../../../src/lib/ulid";
import type { MessageRun, ToolOutputsArgs } from "../../../src/rpc/session";
import { closeItem } from "../../../src/runtime/inbox";
import { escalationOutput } from "../../../src/runtime/interpret";
import { maxTurnsOf, newRun, newRunId, traceArgs, traceEvent } from "../../../src/runtime/run-record";
import { interruptedStep } from "../../../src/runtime/run-recovery";
import {
  approvalPending,
  type Denial,
  decideApproval,
  nextEffect,
  withCallsDone,
} from "../../../src/runtime/tool-work";
import type { HistoryItem } from "../../../src/schemas/handoff";
import type { InboxAnswer, InboxItem } from "../../../src/schemas/inbox";
import type { Run, TraceEvent, TracePage } from "../../../src/schemas/run";
import { agentDirectory } from "../../../src/services/registry-cache";
import { type SessionRecord, toHistoryItem, touch } from "../../../src/sessions/model";
import { TIMER_KEYS } from "../../shared/timer-kinds";
import type { SessionHandoffs } from "../handoffs/session-handoffs";
import { auditScope, type SessionKernel } from "../session-kernel";
import type { TriggerPoints } from "../triggers/trigger-queue";
import { RunAnswer } from "./run-answer";
import { type FanOutRunner, RunCalls } from "./run-calls";
import { RunLoop } from "./run-loop";
import { RunPauses } from "./run-pauses";
import { RunSteps } from "./run-steps";
import type { RunRow, RunStore } from "./run-store";

/**
 * The run feature of the SessionDO (design §4a): a user message runs the current agent's
 * turn, repeated while it calls tools and continued by the target after a handoff, until
 * a final answer, a pause (a person, an approval, the client's tool outputs), or
 * max_turns. The decisions are pure (src/runtime: what a turn is offered, what a response
 * means, what its tool calls need next, how a run moves); the DO side is in three parts:
 * this file takes the requests and the answers that resume a paused run, run-loop.ts
 * drives a run through its turns and calls, and run-steps.ts writes each step (its items,
 * run record, trace events and audit records in one transaction).
 *
 * - One run at a time: a message while one is running or paused is RUN_IN_PROGRESS.
 * - Each step is recorded before it is taken (`step`, and the response's `work`), so a
 *   restart resumes a run that was running (the sweep timer, or the next call) — at most
 *   MAX_RESUMES times, then it fails with RUN_INTERRUPTED. A run is never left `running`
 *   with nothing driving it; a paused run waits in storage, with a timer for its deadline.
 */

/** Restarts a run survives before it fails with RUN_INTERRUPTED. */
const MAX_RESUMES = 2;

export class SessionRuns {
  private readonly steps: RunSteps;
  private readonly loop: RunLoop;

  constructor(
    private readonly k: SessionKernel,
    readonly store: RunStore,
    handoffs: SessionHandoffs,
    points: TriggerPoints,
    fanout: FanOutRunner,
  ) {
    this.steps = new RunSteps(k, store, points);
    const pauses = new RunPauses(k, this.steps);
    const calls = new RunCalls(k, this.steps, pauses, handoffs, fanout);
    this.loop = new RunLoop(k, this.steps, calls, pauses, new RunAnswer(k, this.steps, handoffs));
  }

  // ── Requests ──────────────────────────────────────────────────────────────

  /** A user message: stored, and it starts a run of the current agent; answered when the run ends or pauses (or after RUN_WAIT_MS). */
  async userMessage(content: string, actor: Actor): Promise<Result<MessageRun>> {
    const started = await this.startRun(content, actor);
    if (!started.ok) return started;
    await this.loop.waitFor(started.value.run.id);
    return ok({ message: started.value.message, run: this.steps.view(started.value.run.id)! });
  }

  /** The run a streamed message started goes on without a caller waiting. */
  driveInBackground(runId: string): void {
    void this.loop.drive(runId);
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
      return err(
        "RUN_IN_PROGRESS",
        `Run ${open.run.id} is ${open.run.status}; send the next message when it has ended.`,
        {
          run_id: open.run.id,
          status: open.run.status,
        },
      );
    }
    const now = this.k.now();
    const session = touch(loaded.value, now);
    const scope = auditScope(session);
    const item = toHistoryItem({ role: "user", content }, session.current_agent, `msg_${ulid(now)}`, now);
    const run = newRun({
      id: newRunId(session.id, now),
      session_id: session.id,
      agent: session.current_agent,
      max_turns: maxTurnsOf(session.metadata),
      now,
    });
    await this.k.commit(
      session,
      [runStarted(scope, actor, now, { run_id: run.id, agent: run.agent, message_id: item.id! })],
      () => {
        this.store.save({ run, step: null, resumes: 0, work: null });
        this.steps.append(session, [item], actor, now, run.id);
        // Made here, after the run's own event, so live subscribers see the run start first.
        this.store.addEvents([traceEvent(run, "agent_start", run.agent, now, { outcome: "run started" })]);
        this.steps.watch(run.id, now);
      },
    );
    await this.k.timers.arm();
    return ok({ message: item, run: this.steps.view(run.id)! });
  }

  get(id: string): Result<Run> {
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    const run = this.steps.view(id);
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
  async resolve(
    inboxId: string,
    answer: InboxAnswer,
    actor: Actor,
  ): Promise<Result<{ item: InboxItem; run: Run | null }>> {
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    const item = this.k.inbox.get(inboxId);
    if (!item) return err("INBOX_ITEM_NOT_FOUND", `No inbox item '${inboxId}'.`, { inbox_id: inboxId });
    if (item.status !== "open")
      return err("INBOX_ITEM_CLOSED", `Inbox item '${inboxId}' is ${item.status}.`, {
        inbox_id: inboxId,
        status: item.status,
      });
    const isApproval = item.kind === "approval";
    if (isApproval !== "decision" in answer) {
      return err(
        "INBOX_ANSWER_MISMATCH",
        isApproval
          ? `Inbox item '${inboxId}' asks for an approval: answer { decision: "approve" | "deny", reason? }.`
          : `Inbox item '${inboxId}' asks a question: answer { reply }.`,
        {
          inbox_id: inboxId,
          kind: item.kind,
        },
      );
    }
    if ("decision" in answer)
      return this.decide(item, answer.decision, { by: "person", reason: answer.reason }, actor, loaded.value);
    return this.answer(item, answer.reply, actor, loaded.value);
  }

  /** A reply to a question: closes the item and completes the run it paused, with the reply as the agent's output. */
  private async answer(
    item: InboxItem,
    reply: string,
    actor: Actor,
    loaded: SessionRecord,
  ): Promise<Result<{ item: InboxItem; run: Run | null }>> {
    const now = this.k.now();
    const closed = closeItem(item, "resolved", now, { reply, by: actor.actor })!;
    const session = touch(loaded, now);
    const scope = auditScope(session);
    const records = [
      inboxItemClosed(scope, actor, now, {
        inbox_id: item.id,
        agent: item.agent,
        outcome: "resolved",
        resolved_by: actor.actor,
      }),
    ];
    const paused = this.steps.pausedOn(item.id);
    const items: HistoryItem[] = [];
    let next: RunRow | null = null;
    if (paused?.run.pending?.kind === "human") {
      const { agent, tool_call_id: call } = paused.run.pending;
      if (call !== null)
        items.push(
          escalationOutput(
            agent,
            { id: call, name: "escalate_to_human", arguments: "{}" },
            { answered: true, text: reply },
          ),
        );
      items.push({ role: "assistant", agent, type: "message", content: reply });
      next = this.steps.moved(paused, "completed", { output: reply, output_agent: agent }, scope, actor, now, records);
      next.run = { ...next.run, agent };
    }
    await this.k.commit(session, records, () => {
      this.k.inbox.save(closed);
      this.steps.append(session, items, actor, now, paused?.run.id ?? null);
      if (next) {
        this.store.save({ ...next, work: null });
        this.store.addEvents([
          traceEvent(next.run, "agent_complete", next.run.agent, now, {
            executor: "human",
            outcome: "answered from the inbox",
          }),
        ]);
      }
      this.k.timers.cancel(TIMER_KEYS.inbox(item.id));
    });
    return ok({ item: closed, run: next ? this.steps.view(next.run.id) : null });
  }

  /**
   * A decision on an approval (a person's, or the alarm's deny): the call runs or gets the
   * denial as its output; once every call of the pause is decided the run goes on.
   */
  private async decide(
    item: InboxItem,
    decision: "approve" | "deny",
    denial: Denial,
    actor: Actor,
    loaded: SessionRecord,
  ): Promise<Result<{ item: InboxItem; run: Run | null }>> {
    const now = this.k.now();
    const expired = denial.by === "timeout";
    const closed = closeItem(
      item,
      expired ? "expired" : "resolved",
      now,
      expired
        ? undefined
        : { reply: denial.by === "person" ? (denial.reason ?? null) : null, decision, by: actor.actor },
    )!;
    const session = loaded.status === "active" ? touch(loaded, now) : loaded;
    const scope = auditScope(session);
    const records: AuditRecord[] = [
      inboxItemClosed(scope, actor, now, {
        inbox_id: item.id,
        agent: item.agent,
        outcome: expired ? "expired" : "resolved",
        resolved_by: expired ? null : actor.actor,
      }),
    ];
    const paused = this.steps.pausedOn(item.id);
    const decided = paused?.work ? decideApproval(paused.work, item.id, decision, denial) : null;
    let next: RunRow | null = null;
    const items: HistoryItem[] = [];
    const events: TraceEvent[] = [];
    if (paused && decided) {
      if (decided.output) items.push(decided.output);
      const outcome =
        decision === "approve"
          ? `approved by ${actor.actor}`
          : expired
            ? `denied: nobody approved it within ${(denial as { timeout_s: number }).timeout_s} s`
            : `denied by ${actor.actor}`;
      events.push(
        traceEvent(paused.run, "tool_call", decided.work.agent, now, {
          tool_name: decided.call.name,
          tool_args: traceArgs(decided.call.arguments),
          outcome,
        }),
      );
      const work = decided.work;
      if (nextEffect(work).type === "await_approval") {
        const pending = approvalPending(work, paused.run.pending?.expires_at ?? new Date(now).toISOString());
        next = { ...paused, work, run: { ...paused.run, pending, updated_at: new Date(now).toISOString() } };
      } else {
        next = { ...this.steps.moved(paused, "running", {}, scope, actor, now, records), work, step: "tools" };
      }
    }
    await this.k.commit(session, records, () => {
      this.k.inbox.save(closed);
      this.steps.append(session, items, agentActor(item.agent ?? "system"), now, paused?.run.id ?? null);
      this.k.timers.cancel(TIMER_KEYS.inbox(item.id));
      if (next) {
        this.store.save(next);
        this.store.addEvents(events);
        if (next.run.status === "running") this.steps.watch(next.run.id, now);
      }
    });
    if (next?.run.status === "running") await this.loop.waitFor(next.run.id);
    return ok({ item: closed, run: next ? this.steps.view(next.run.id) : null });
  }

  /**
   * The client's outputs for a run in requires_action: exactly one per pending call, else
   * TOOL_OUTPUTS_MISMATCH and nothing changes. Answers once the run has moved on.
   */
  async toolOutputs(args: ToolOutputsArgs, actor: Actor): Promise<Result<{ run: Run }>> {
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    const paused = this.store.active();
    if (paused?.run.status !== "requires_action" || paused.run.pending?.kind !== "client_tools" || !paused.work) {
      return err(
        "RUN_NOT_AWAITING_OUTPUTS",
        "No run of this session is waiting for tool outputs.",
        paused ? { run_id: paused.run.id, status: paused.run.status } : {},
      );
    }
    if (args.run_id !== undefined && args.run_id !== paused.run.id) {
      return err("RUN_NOT_AWAITING_OUTPUTS", `Run '${args.run_id}' is not the run waiting for tool outputs.`, {
        run_id: args.run_id,
        waiting: paused.run.id,
      });
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
    const items: HistoryItem[] = args.outputs.map((o) => ({
      role: "tool",
      agent,
      type: "tool_output",
      tool_name: expected.get(o.tool_call_id)!.name,
      tool_call_id: o.tool_call_id,
      content: o.output,
    }));
    const events = args.outputs.map((o) =>
      traceEvent(paused.run, "tool_call", agent, now, {
        tool_name: expected.get(o.tool_call_id)!.name,
        outcome: "output from the client",
      }),
    );
    const records: AuditRecord[] = [];
    const next: RunRow = {
      ...this.steps.moved(paused, "running", {}, scope, actor, now, records),
      work: withCallsDone(paused.work, seen),
      step: "tools",
    };
    await this.k.commit(session, records, () => {
      this.steps.append(session, items, actor, now, next.run.id);
      this.store.save(next);
      this.store.addEvents(events);
      this.k.timers.cancel(TIMER_KEYS.toolOutputs);
      this.steps.watch(next.run.id, now);
    });
    await this.loop.waitFor(next.run.id);
    return ok({ run: this.steps.view(next.run.id)! });
  }

  /**
   * An inbox item's time ran out: a human turn fails the run; an escalation tells the agent
   * nobody answered and the run goes on; an approval is denied.
   */
  async expireItem(inboxId: string): Promise<void> {
    const item = this.k.inbox.get(inboxId);
    const session = this.k.store.load();
    if (item?.status !== "open" || !session) return;
    if (item.kind === "approval") {
      const agent = this.steps.pausedOn(item.id)?.work?.agent;
      const directory = agent ? await agentDirectory(this.k.env.DB, session.tenant).catch(() => null) : null;
      const timeout_s =
        directory?.byName.get(agent!)?.tools.confirmation.timeout_s ??
        Math.round((Date.parse(item.expires_at ?? item.created_at) - Date.parse(item.created_at)) / 1000);
      await this.decide(item, "deny", { by: "timeout", timeout_s }, SYSTEM_ACTOR, session);
      return;
    }
    const now = this.k.now();
    const closed = closeItem(item, "expired", now)!;
    const scope = auditScope(session);
    const records: AuditRecord[] = [
      inboxItemClosed(scope, SYSTEM_ACTOR, now, {
        inbox_id: item.id,
        agent: item.agent,
        outcome: "expired",
        resolved_by: null,
      }),
    ];
    const paused = this.steps.pausedOn(item.id);
    let next: RunRow | null = null;
    const items: HistoryItem[] = [];
    if (paused?.run.pending?.kind === "human") {
      const pending = paused.run.pending;
      if (pending.tool_call_id === null) {
        next = this.steps.moved(
          paused,
          "failed",
          {
            error: {
              code: "HUMAN_TIMEOUT",
              message: `Nobody answered '${pending.agent}' before ${pending.expires_at}.`,
              details: { inbox_id: item.id },
            },
          },
          scope,
          SYSTEM_ACTOR,
          now,
          records,
        );
      } else {
        items.push(
          escalationOutput(
            pending.agent,
            { id: pending.tool_call_id, name: "escalate_to_human", arguments: "{}" },
            { answered: false, reason: "the inbox item expired" },
          ),
        );
        next = { ...this.steps.moved(paused, "running", {}, scope, SYSTEM_ACTOR, now, records), step: "turn" };
      }
    }
    await this.k.commit(session, records, () => {
      this.k.inbox.save(closed);
      this.steps.append(session, items, SYSTEM_ACTOR, now, paused?.run.id ?? null);
      if (next) {
        this.store.save(next);
        if (next.run.status === "running") this.steps.watch(next.run.id, now);
      }
    });
    if (next?.run.status === "running") void this.loop.drive(next.run.id);
  }

  /** A run in requires_action whose outputs never came: it fails with TOOL_OUTPUTS_TIMEOUT. */
  async expireToolOutputs(runId: string): Promise<void> {
    const row = this.store.get(runId);
    if (row?.run.status !== "requires_action") return;
    await this.steps.finish(
      runId,
      "failed",
      {
        error: {
          code: "TOOL_OUTPUTS_TIMEOUT",
          message: `No tool outputs were posted before ${row.run.pending?.expires_at}.`,
          details: { run_id: runId },
        },
      },
      SYSTEM_ACTOR,
    );
  }

  // ── Recovery ──────────────────────────────────────────────────────────────

  /**
   * A running run no loop drives here was left by a restart: resume it, or fail it past
   * MAX_RESUMES. `driving` when this instance's loop has it (the watchdog waits on).
   */
  async resumeOrphan(): Promise<"none" | "driving" | "resumed"> {
    const open = this.store.active();
    if (open?.run.status !== "running") return "none";
    if (this.loop.isDriving(open.run.id)) return "driving";
    if (open.resumes >= MAX_RESUMES) {
      await this.steps.finish(
        open.run.id,
        "failed",
        {
          error: {
            code: "RUN_INTERRUPTED",
            message: `The run was interrupted by ${open.resumes + 1} restarts and was not resumed again.`,
          },
        },
        SYSTEM_ACTOR,
      );
      return "none";
    }
    const session = this.k.store.load();
    if (!session) return "none";
    const now = this.k.now();
    // What the interrupted step left unanswered is answered first, so the history stays well-formed.
    const { answers, work } = interruptedStep({
      work: open.work ?? null,
      step: open.step,
      current_agent: session.current_agent,
      history: () => this.k.store.history().map((h) => h.item),
    });
    await this.k.commit(session, [], () => {
      this.steps.append(session, answers, SYSTEM_ACTOR, now, open.run.id);
      this.store.save({
        ...open,
        resumes: open.resumes + 1,
        step: null,
        work,
        run: { ...open.run, agent: session.current_agent },
      });
      this.store.addEvents([
        traceEvent(open.run, "agent_start", session.current_agent, now, {
          outcome: `resumed after a restart (${open.step ?? "between steps"})`,
        }),
      ]);
      this.steps.watch(open.run.id, now);
    });
    void this.loop.drive(open.run.id);
    return "resumed";
  }

  /** True when a run is active but no loop drives it here (the sweep's question at start-up). */
  orphaned(): boolean {
    const open = this.store.active();
    return open !== null && open.run.status === "running" && !this.loop.isDriving(open.run.id);
  }

  /** Closes what the session's end leaves open (inside the ending transaction): the run fails, open items are cancelled. */
  onSessionEnd(session: SessionRecord, now: number, reason: string): void {
    this.steps.onSessionEnd(session, now, reason);
  }
}
