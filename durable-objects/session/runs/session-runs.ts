import { type Actor, type AuditRecord, SYSTEM_ACTOR } from "../../../src/audit/record";
import { runStarted } from "../../../src/audit/run-events";
import { err, ok, type Result } from "../../../src/errors";
import { ulid } from "../../../src/lib/ulid";
import type { MessageOptions, MessageRun, ToolOutputsArgs } from "../../../src/rpc/session";
import { isActiveRun, maxTurnsOf, newRun, newRunId, traceEvent } from "../../../src/runtime/run-record";
import { interruptedStep, interruptedTrace, turnsTaken } from "../../../src/runtime/run-recovery";
import { withCallsDone } from "../../../src/runtime/tool-work";
import type { HistoryItem } from "../../../src/schemas/handoff";
import type { Run, TraceEvent, TracePage } from "../../../src/schemas/run";
import { type SessionRecord, toHistoryItem, touch } from "../../../src/sessions/model";
import { resumedByOf, runTrace } from "../../../src/telemetry/propagation";
import type { TraceContext } from "../../../src/telemetry/trace-context";
import { TIMER_KEYS } from "../../shared/timer-kinds";
import type { SessionHandoffs } from "../handoffs/session-handoffs";
import { ConversationMemory } from "../memory/conversation-memory";
import { auditScope, type SessionKernel } from "../session-kernel";
import type { TriggerPoints } from "../triggers/trigger-queue";
import type { RemoteThreads } from "./remote-threads";
import { RunAnswer } from "./run-answer";
import { type FanOutRunner, RunCalls } from "./run-calls";
import { RunInbox } from "./run-inbox";
import { RunLoop } from "./run-loop";
import { RunPauses } from "./run-pauses";
import { RunSteps } from "./run-steps";
import type { RunRow, RunStore } from "./run-store";
import { cutMessage, RunStreams } from "./run-streams";

/**
 * The run feature of the SessionDO: a user message runs the current agent's turn, repeated
 * while it calls tools and continued by the target after a handoff, until a final answer, a
 * pause (a person, an approval, the client's tool outputs), or max_turns. The decisions are
 * pure (src/runtime: what a turn is offered, what a response means, what its tool calls
 * need next, how a run moves). This file takes the requests, the client's tool outputs and
 * the recovery of runs a restart interrupted; run-inbox.ts takes a person's answers;
 * run-loop.ts drives a run (with run-calls.ts, run-pauses.ts and run-answer.ts); and
 * run-steps.ts writes each step (its items, run record, trace events and audit records in
 * one transaction).
 *
 * - One run at a time: a message while one is running or paused is RUN_IN_PROGRESS.
 * - Each step is recorded before it is taken (`step`, and the response's `work`), so a
 *   restart resumes a run that was running (the sweep timer, or the next call) — at most
 *   MAX_RESUMES times, then it fails with RUN_INTERRUPTED. A run is never left `running`
 *   with nothing driving it; a paused run waits in storage, with a timer for its deadline.
 */

/**
 * The tables a run's start writes: a session's first run makes them in one step (SchemaGate.make)
 * rather than one failed statement each, on the way to its first model call.
 */
const RUN_START_TABLES = ["runs", "run_events", "messages", "live_events"] as const;

/** Restarts a run survives before it fails with RUN_INTERRUPTED. */
const MAX_RESUMES = 2;

/** A new message while a run is open. */
export const inProgress = (open: RunRow) =>
  err("RUN_IN_PROGRESS", `Run ${open.run.id} is ${open.run.status}; send the next message when it has ended.`, {
    run_id: open.run.id,
    status: open.run.status,
  });

export class SessionRuns {
  private readonly steps: RunSteps;
  private readonly loop: RunLoop;
  private readonly streams: RunStreams;
  /** A person's answers from the inbox, and their expiry. */
  readonly inbox: RunInbox;

  constructor(
    /** Whole: it builds the loop, steps, calls, pauses and inbox answers over it. */
    private readonly k: SessionKernel,
    readonly store: RunStore,
    handoffs: SessionHandoffs,
    points: TriggerPoints,
    fanout: FanOutRunner,
    threads: RemoteThreads,
  ) {
    this.steps = new RunSteps(k, store, points);
    const pauses = new RunPauses(k, this.steps);
    const calls = new RunCalls(k, this.steps, pauses, handoffs, fanout);
    this.streams = new RunStreams(k);
    this.loop = new RunLoop(
      k,
      this.steps,
      calls,
      pauses,
      new RunAnswer(k, this.steps, handoffs, this.streams),
      this.streams,
      threads,
      new ConversationMemory(k, store),
    );
    this.inbox = new RunInbox(k, this.steps, this.loop);
  }

  // ── Requests ──────────────────────────────────────────────────────────────

  /** A started run (startRun) driven, and answered when it ends or pauses (or after RUN_WAIT_MS). */
  async answer(started: MessageRun): Promise<Result<MessageRun>> {
    await this.loop.waitFor(started.run.id);
    return ok({ message: started.message, run: this.steps.view(started.run.id)! });
  }

  /** The run a streamed message started goes on without a caller waiting. */
  driveInBackground(runId: string): void {
    void this.loop.drive(runId);
  }

  /**
   * Cancels an active run (RUN_NOT_CANCELLABLE once it has ended): its model call is stopped,
   * what it had written kept and marked as cut, the run ends `cancelled`.
   */
  async cancel(runId: string, actor: Actor, reason = "cancelled by the caller"): Promise<Result<Run>> {
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    const row = this.store.get(runId);
    if (!row) return err("RUN_NOT_FOUND", `No run '${runId}'.`, { run_id: runId });
    if (!isActiveRun(row.run.status))
      return err("RUN_NOT_CANCELLABLE", `Run '${runId}' has ended (${row.run.status}).`, {
        run_id: runId,
        status: row.run.status,
      });
    const written = this.streams.abort(runId);
    await this.steps.cancel(row, actor, reason, written ? cutMessage({ ...written, text: () => written.text }) : []);
    return ok(this.steps.view(runId)!);
  }

  /** What sendMessage answers once the run has stopped running (ended or paused); null while it runs. */
  settled(runId: string, message: HistoryItem): MessageRun | null {
    // Asked after every commit while a run streams: the record is read and parsed once it has stopped.
    if (this.store.status(runId) === "running") return null;
    const row = this.store.get(runId);
    return !row || row.run.status === "running" ? null : { message, run: this.store.withEvents(row.run) };
  }

  /**
   * A user message stored (with the id its client gave it, if any) and its run recorded (not yet
   * driven); admitted first (SessionMessages). The run belongs to the request's trace when it
   * carried one, else to its own; a message that continues a paused run leaves its trace as is.
   */
  async startRun(
    content: string,
    actor: Actor,
    options: Pick<MessageOptions, "client_message_id" | "trace" | "a2a_method"> = {},
  ): Promise<Result<MessageRun>> {
    const clientId = options.client_message_id;
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    await this.resumeOrphan();
    const open = this.store.active();
    if (open?.run.status === "awaiting_human" && open.run.pending?.kind === "input")
      return this.continueWithInput(open, loaded.value, content, actor, clientId);
    if (open) return inProgress(open);
    const now = this.k.now();
    const session = touch(loaded.value, now);
    const scope = auditScope(session);
    const item = toHistoryItem({ role: "user", content }, session.current_agent, `msg_${ulid(now)}`, now);
    const id = newRunId(session.id, now);
    const trace = runTrace(id, options.trace ?? null);
    const run = newRun({
      id,
      session_id: session.id,
      agent: session.current_agent,
      max_turns: maxTurnsOf(session.metadata),
      now,
      trace_id: trace.trace_id,
    });
    let begun: TraceEvent | undefined;
    await this.k.commit(
      session,
      [runStarted(scope, actor, now, { run_id: run.id, agent: run.agent, message_id: item.id! })],
      () => {
        this.k.tables.make(RUN_START_TABLES);
        const origin = options.a2a_method
          ? { a2a_method: options.a2a_method, ...(clientId ? { message_id: clientId } : {}) }
          : null;
        this.store.save({ run, step: null, resumes: 0, work: null, trace_parent: trace.parent, origin });
        this.steps.append(session, [{ ...item, client_message_id: clientId }], now, run.id);
        // Made here, after the run's own event, so live subscribers see the run start first.
        begun = traceEvent(run, "agent_start", run.agent, now, { outcome: "run started" });
        this.store.addEvents([begun]);
        this.steps.watch(run.id, now);
      },
    );
    await this.k.timers.arm();
    // What was just written, not read back: a new run holds this one event.
    return ok({ message: item, run: { ...run, events: [begun!] } });
  }

  /** The user's message answers a remote agent's request for input: stored, and the run goes on (the message continues the remote task). */
  private async continueWithInput(
    paused: RunRow,
    loaded: SessionRecord,
    content: string,
    actor: Actor,
    clientId: string | undefined,
  ): Promise<Result<MessageRun>> {
    const now = this.k.now();
    const session = touch(loaded, now);
    const scope = auditScope(session);
    const records: AuditRecord[] = [];
    const item = toHistoryItem({ role: "user", content }, session.current_agent, `msg_${ulid(now)}`, now);
    const next: RunRow = {
      ...this.steps.moved(paused, "running", {}, scope, actor, now, records),
      step: null,
      work: null,
    };
    await this.k.commit(session, records, () => {
      this.steps.append(session, [{ ...item, client_message_id: clientId }], now, paused.run.id);
      this.store.save(next);
      this.k.timers.cancel(TIMER_KEYS.toolOutputs);
      this.steps.watch(next.run.id, now);
    });
    await this.k.timers.arm();
    return ok({ message: item, run: this.steps.view(next.run.id)! });
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
   * The client's outputs for a run in requires_action: exactly one per pending call, else
   * TOOL_OUTPUTS_MISMATCH and nothing changes. Answers once the run has moved on.
   */
  async toolOutputs(args: ToolOutputsArgs, actor: Actor, resumedBy?: TraceContext): Promise<Result<{ run: Run }>> {
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
        ...resumedByOf(resumedBy),
      }),
    );
    const records: AuditRecord[] = [];
    const next: RunRow = {
      ...this.steps.moved(paused, "running", {}, scope, actor, now, records),
      work: withCallsDone(paused.work, seen),
      step: "tools",
    };
    await this.k.commit(session, records, () => {
      this.steps.append(session, items, now, next.run.id);
      this.store.save(next);
      this.store.addEvents(events);
      this.k.timers.cancel(TIMER_KEYS.toolOutputs);
      this.steps.watch(next.run.id, now);
    });
    await this.loop.waitFor(next.run.id);
    return ok({ run: this.steps.view(next.run.id)! });
  }

  /** A run in requires_action whose outputs never came fails with TOOL_OUTPUTS_TIMEOUT; one waiting for input, INPUT_TIMEOUT. */
  async expireToolOutputs(runId: string): Promise<void> {
    const row = this.store.get(runId);
    if (row?.run.status === "awaiting_human" && row.run.pending?.kind === "input") {
      await this.steps.finish(
        runId,
        "failed",
        {
          error: {
            code: "INPUT_TIMEOUT",
            message: `No message answered '${row.run.pending.agent}' before ${row.run.pending.expires_at}.`,
            details: { run_id: runId },
          },
        },
        { actor: SYSTEM_ACTOR },
      );
      return;
    }
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
      { actor: SYSTEM_ACTOR },
    );
  }

  // ── Recovery ──────────────────────────────────────────────────────────────

  /**
   * At construction (a quick SQL read): a run a previous instance was driving gets its resume
   * timer due now, so the alarm resumes it even if no call comes.
   */
  async onStart(): Promise<void> {
    try {
      if (!this.k.live().ok || !this.orphaned()) return;
      this.k.timers.schedule("run.resume", this.k.now(), { run_id: "" }, { key: TIMER_KEYS.runResume });
      await this.k.timers.arm();
    } catch (error) {
      // A throw inside blockConcurrencyWhile resets the object; the next call resumes the run anyway.
      console.error("run start-up check failed", error);
    }
  }

  /**
   * A running run no loop drives here was left by a restart: resume it, or fail it past
   * MAX_RESUMES. `driving` when this instance's loop has it (the watchdog waits on).
   */
  async resumeOrphan(): Promise<"none" | "driving" | "resumed"> {
    const open = this.store.active();
    if (open?.run.status !== "running") return "none";
    if (this.loop.isDriving(open.run.id)) return "driving";
    await this.streams.retractUnstored(open.run.id);
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
        { actor: SYSTEM_ACTOR },
      );
      return "none";
    }
    const session = this.k.store.load();
    if (!session) return "none";
    const now = this.k.now();
    // What the interrupted step left unanswered is answered first, so the history stays well-formed.
    const { answers, work, interrupted } = interruptedStep({
      work: open.work ?? null,
      step: open.step,
      current_agent: session.current_agent,
      history: () => this.k.store.history().map((h) => h.item),
    });
    await this.k.commit(session, [], () => {
      this.steps.append(session, answers, now, open.run.id);
      this.store.save({
        ...open,
        resumes: open.resumes + 1,
        step: null,
        work,
        run: { ...open.run, agent: session.current_agent, turns: turnsTaken(open.run.turns, open.step) },
      });
      this.store.addEvents([
        ...interruptedTrace(open.run, interrupted, now),
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

  /**
   * Closes what the session's end leaves open (inside the ending transaction): the run fails, open
   * items are cancelled.
   */
  onSessionEnd(session: SessionRecord, now: number, reason: string): void {
    this.steps.onSessionEnd(session, now, reason);
  }
}
