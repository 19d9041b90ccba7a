import type { AuditScope } from "../../../src/audit/events";
import { type Actor, type AuditRecord, SYSTEM_ACTOR } from "../../../src/audit/record";
import { inboxItemClosed } from "../../../src/audit/run-events";
import { ulid } from "../../../src/lib/ulid";
import { type CountedItem, itemTokens } from "../../../src/memory/tokens";
import { closeItem } from "../../../src/runtime/inbox";
import { liveMessage } from "../../../src/runtime/live-events";
import { resumeAt } from "../../../src/runtime/run-deadlines";
import { isActiveRun, mayContinue, moveRun, type RunChange } from "../../../src/runtime/run-record";
import type { HistoryItem } from "../../../src/schemas/handoff";
import type { InboxItem } from "../../../src/schemas/inbox";
import type { Run, RunStatus, TraceEvent } from "../../../src/schemas/run";
import { agentDirectory } from "../../../src/services/registry-cache";
import { loadedTokenizer } from "../../../src/services/tokenizer";
import { type SessionRecord, touch } from "../../../src/sessions/model";
import { pointAfterRun } from "../../../src/triggers/fire";
import { TIMER_KEYS } from "../../shared/timer-kinds";
import { auditScope, type SessionKernel } from "../session-kernel";
import type { TriggerPoints } from "../triggers/trigger-queue";
import type { RunRow, RunStore } from "./run-store";

/** What one step of a run writes (RunSteps.commitStep). */
export interface Step {
  items?: CountedItem[];
  events?: TraceEvent[];
  records?: AuditRecord[];
  now: number;
  /** What the next step (recorded in the row) may take: the watchdog is moved past it. */
  stepMs?: number;
  /** Other writes of the step, in its transaction (the memory's). */
  extra?: () => void;
}

/** How a run ends (RunSteps.finish), besides its status and change. */
export interface RunEnd {
  /** Who ended it: the system unless a person's answer did. */
  actor?: Actor;
  /** The agent it ended with, when another than the row's. */
  agent?: string;
  events?: TraceEvent[];
  items?: HistoryItem[];
  /** The row as the caller last recorded it (used when its status is still the stored one). */
  base?: RunRow;
}

/**
 * How a run's steps are written (docs/architecture.md, The path of a run): each step's history items, run row, trace
 * events and audit records in one transaction, the run moved only by the transition
 * table, and the watchdog pushed on while it runs. Shared by the loop that drives runs
 * (run-loop.ts) and the answers that resume them (session-runs.ts).
 */
export class RunSteps {
  constructor(
    private readonly k: Pick<
      SessionKernel,
      "commit" | "env" | "inbox" | "liveEvents" | "now" | "outbox" | "store" | "timers" | "transaction"
    >,
    readonly store: RunStore,
    /** A run's end is an evaluation point of the session's triggers. */
    private readonly points: Pick<TriggerPoints, "afterRun">,
  ) {}

  /** Records the step about to be taken, which may take `stepMs`, and moves the watchdog past it, before taking it. */
  async record(row: RunRow, now: number, stepMs = 0): Promise<RunRow> {
    const next = { ...row, run: { ...row.run, updated_at: new Date(now).toISOString() } };
    this.k.transaction(() => {
      this.store.save(next);
      this.watch(row.run.id, now, stepMs);
    });
    await this.k.timers.arm();
    return next;
  }

  /**
   * One step: history items, the run row, its events and audit records, in one transaction;
   * the watchdog past `stepMs`, what the next step (recorded in `row`) may take; `extra`, other
   * writes of the step (the memory's).
   */
  async commitStep(
    session: SessionRecord,
    row: RunRow,
    { items = [], events = [], records = [], now, stepMs = 0, extra }: Step,
  ): Promise<void> {
    const next = { ...row, run: { ...row.run, updated_at: new Date(now).toISOString() } };
    await this.k.commit(touch(session, now), records, () => {
      extra?.();
      this.append(session, items, now, row.run.id);
      this.store.save(next);
      this.store.addEvents(events);
      this.watch(row.run.id, now, stepMs);
    });
  }

  /** Ends a run (completed or failed), with its last items and events (see RunEnd). */
  async finish(
    runId: string,
    to: Extract<RunStatus, "completed" | "failed">,
    change: RunChange,
    { actor = SYSTEM_ACTOR, agent, events = [], items = [], base }: RunEnd = {},
  ): Promise<void> {
    // The registry of now, read before the run is, so the run's end point can be left out
    // when no trigger could answer it (TriggerPoints.afterRun); a failed read only queues it.
    const tenant = this.k.store.load()?.tenant;
    if (tenant) await agentDirectory(this.k.env.DB, tenant).catch(() => null);
    const stored = this.store.get(runId);
    const session = this.k.store.load();
    if (!stored || !isActiveRun(stored.run.status) || !session) return;
    const row = base && base.run.status === stored.run.status ? base : stored;
    const now = this.k.now();
    const scope = auditScope(session);
    const records: AuditRecord[] = [];
    const next = this.moved(
      agent ? { ...row, run: { ...row.run, agent } } : row,
      to,
      change,
      scope,
      actor,
      now,
      records,
    );
    await this.k.commit(session.status === "active" ? touch(session, now) : session, records, () => {
      this.append(session, items, now, runId);
      this.store.save({ ...next, step: null, work: null });
      this.store.addEvents(events);
      this.k.timers.cancel(TIMER_KEYS.runResume);
      this.k.timers.cancel(TIMER_KEYS.toolOutputs);
      if (session.status === "active")
        this.points.afterRun(session, pointAfterRun(to === "failed" ? (change.error?.code ?? "INTERNAL") : null));
    });
  }

  /** The run moved by the transition table, its audit record added to `records`. */
  moved(
    row: RunRow,
    to: RunStatus,
    change: RunChange,
    scope: AuditScope,
    actor: Actor,
    now: number,
    records: AuditRecord[],
  ): RunRow {
    const moved = moveRun(row.run, to, change, scope, actor, now);
    if (!moved) throw new Error(`run ${row.run.id}: ${row.run.status} → ${to} is not a transition`);
    records.push(moved.record);
    return { ...row, run: moved.run };
  }

  /**
   * Appends a run's items to the conversation, each with its live event. No audit record each:
   * the run's own records say what it did, and the sessions index counts the history when the
   * outbox flushes (docs/sessions.md, Audit). A user message's client id is kept beside it, not in it.
   */
  append(
    session: SessionRecord,
    items: readonly (CountedItem & { client_message_id?: string })[],
    now: number,
    runId: string | null,
  ): void {
    const count = loadedTokenizer();
    for (const { tokens, client_message_id, ...raw } of items) {
      const item = {
        ...raw,
        id: raw.id ?? `msg_${ulid(now)}`,
        created_at: raw.created_at ?? new Date(now).toISOString(),
      };
      // The provider's count when it gave one; else counted when this isolate has the tokenizer (docs/memory.md).
      const counted = tokens ?? (count ? itemTokens(item, count) : null);
      this.k.store.appendMessage(item as HistoryItem & { id: string }, now, counted, client_message_id ?? null);
      this.k.liveEvents.append([liveMessage(session.id, runId, item, now)]);
    }
  }

  /** The session, when the run may carry on after an outside call (see mayContinue); else null. */
  continuing(runId: string): SessionRecord | null {
    const session = this.k.store.load();
    return mayContinue(session, this.store.get(runId)?.run) ? session : null;
  }

  /** The timer that resumes a run if its loop dies with the instance: past what the step under way may take. */
  watch(runId: string, now: number, stepMs = 0): void {
    this.k.timers.schedule("run.resume", resumeAt(now, stepMs), { run_id: runId }, { key: TIMER_KEYS.runResume });
  }

  /** The run paused on this inbox item, if any. */
  pausedOn(inboxId: string): RunRow | null {
    const open = this.store.active();
    const pending = open?.run.pending;
    if (!open || !pending) return null;
    if (pending.kind === "human")
      return open.run.status === "awaiting_human" && pending.inbox_id === inboxId ? open : null;
    if (pending.kind === "approval")
      return open.run.status === "awaiting_approval" && pending.approvals.some((a) => a.inbox_id === inboxId)
        ? open
        : null;
    return null;
  }

  /** A run as the API shows it: its record with its trace events. */
  view(id: string): Run | null {
    const row = this.store.get(id);
    return row ? this.store.withEvents(row.run) : null;
  }

  /**
   * Closes what the session's end leaves open (inside the ending transaction): the run fails, open
   * items are cancelled.
   */
  onSessionEnd(session: SessionRecord, now: number, reason: string): void {
    const scope = auditScope(session);
    const records: AuditRecord[] = [];
    this.closeItems(this.closingItems(scope, now, records));
    const open = this.store.active();
    if (open) {
      const code = reason === "session expired" ? "SESSION_EXPIRED" : "SESSION_NOT_FOUND";
      const next = this.moved(
        open,
        "failed",
        { error: { code, message: `The run ended with its session (${reason}).` } },
        scope,
        SYSTEM_ACTOR,
        now,
        records,
      );
      this.store.save({ ...next, work: null });
      this.k.timers.cancel(TIMER_KEYS.runResume);
      this.k.timers.cancel(TIMER_KEYS.toolOutputs);
    }
    this.k.outbox.append(records);
  }

  /**
   * Cancels an active run in one commit: what its model had written (`items`, kept and marked
   * as cut), the run `cancelled` with RUN_CANCELLED, its open inbox items cancelled, its timers
   * gone. A cancelled run raises no trigger point: it ended by the caller's choice.
   */
  async cancel(row: RunRow, actor: Actor, reason: string, items: HistoryItem[]): Promise<void> {
    const session = this.k.store.load()!;
    const now = this.k.now();
    const scope = auditScope(session);
    const records: AuditRecord[] = [];
    const next = this.moved(
      row,
      "cancelled",
      { error: { code: "RUN_CANCELLED", message: `The run was cancelled (${reason}).` } },
      scope,
      actor,
      now,
      records,
    );
    const closed = this.closingItems(scope, now, records, row.run.id);
    await this.k.commit(session.status === "active" ? touch(session, now) : session, records, () => {
      this.append(session, items, now, row.run.id);
      this.closeItems(closed);
      this.store.save({ ...next, step: null, work: null });
      this.k.timers.cancel(TIMER_KEYS.runResume);
      this.k.timers.cancel(TIMER_KEYS.toolOutputs);
    });
  }

  /** The open inbox items (of one run, or all) as cancelled, their records added to `records`. */
  private closingItems(scope: AuditScope, now: number, records: AuditRecord[], runId?: string): InboxItem[] {
    const items = this.k.inbox.list("open").filter((item) => runId === undefined || item.run_id === runId);
    for (const item of items)
      records.push(
        inboxItemClosed(scope, SYSTEM_ACTOR, now, {
          inbox_id: item.id,
          agent: item.agent,
          outcome: "cancelled",
          resolved_by: null,
        }),
      );
    return items.map((item) => closeItem(item, "cancelled", now)!);
  }

  /** Inside the caller's transaction. */
  private closeItems(items: readonly InboxItem[]): void {
    for (const item of items) {
      this.k.inbox.save(item);
      this.k.timers.cancel(TIMER_KEYS.inbox(item.id));
    }
  }
}
