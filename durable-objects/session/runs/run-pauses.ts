import { type Actor, type AuditRecord, agentActor, SYSTEM_ACTOR } from "../../../src/audit/record";
import { inboxItemCreated } from "../../../src/audit/run-events";
import { openItem } from "../../../src/runtime/inbox";
import { liveApproval } from "../../../src/runtime/live-events";
import { ESCALATION_TIMEOUT_MS } from "../../../src/runtime/run-deadlines";
import { traceArgs, traceEvent } from "../../../src/runtime/run-record";
import { approvalPending, approvalPrompt, approvalSummary, withApprovalsAsked } from "../../../src/runtime/tool-work";
import { turnTimeoutMs } from "../../../src/runtime/turn";
import type { AgentDefinition } from "../../../src/schemas/agent";
import type { HistoryItem } from "../../../src/schemas/handoff";
import type { PendingCall, Run, TraceEvent, TurnWork } from "../../../src/schemas/run";
import type { SessionRecord } from "../../../src/sessions/model";
import { TIMER_KEYS } from "../../shared/timer-kinds";
import { auditScope, type SessionKernel } from "../session-kernel";
import type { RunSteps } from "./run-steps";
import type { RunRow } from "./run-store";

/**
 * Where a run pauses: for approvals and the client's tool outputs (with what it waits for),
 * and for a person (an inbox item with its expiry). Each pause is one commit.
 */
export class RunPauses {
  constructor(
    private readonly k: Pick<SessionKernel, "commit" | "inbox" | "liveEvents" | "now" | "store" | "timers">,
    private readonly steps: RunSteps,
  ) {}

  private get store() {
    return this.steps.store;
  }

  /** Pauses the run (approvals, client tools) with what it waits for. */
  async pause(
    row: RunRow,
    work: TurnWork,
    to: "awaiting_approval" | "requires_action",
    pending: NonNullable<Run["pending"]>,
    extra?: () => void,
    records: AuditRecord[] = [],
    before?: () => void,
  ): Promise<void> {
    const session = this.k.store.load()!;
    const now = this.k.now();
    const next = this.steps.moved(row, to, { pending }, auditScope(session), agentActor(work.agent), now, records);
    await this.k.commit(session, records, () => {
      before?.();
      this.store.save({ ...next, work, step: null });
      this.k.timers.cancel(TIMER_KEYS.runResume);
      extra?.();
    });
  }

  /** Opens an inbox item per call that needs approval, and pauses the run in awaiting_approval. */
  async askApproval(row: RunRow, work: TurnWork, calls: PendingCall[], agent: AgentDefinition): Promise<void> {
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
        details: { tool_call_id: call.id, tool_name: call.name, arguments: traceArgs(call.arguments) },
        now,
        expires_at: expires,
      }),
    );
    const asked = withApprovalsAsked(work, new Map(items.map((item, i) => [calls[i]!.id, item.id])));
    // The prompt quotes the call's arguments: the audit keeps the tool's name only.
    const records: AuditRecord[] = items.map((item, i) =>
      inboxItemCreated(scope, actor, now, {
        inbox_id: item.id,
        kind: "approval",
        agent: agent.name,
        run_id: row.run.id,
        handoff_id: null,
        reason: approvalSummary(agent.name, calls[i]!.name),
        tool_name: calls[i]!.name,
        expires_at: item.expires_at,
      }),
    );
    const events = calls.map((call) =>
      traceEvent(row.run, "tool_call", agent.name, now, {
        tool_name: call.name,
        tool_args: traceArgs(call.arguments),
        outcome: "approval required",
      }),
    );
    await this.pause(
      row,
      asked,
      "awaiting_approval",
      approvalPending(asked, new Date(expires).toISOString()),
      undefined,
      records,
      () => {
        for (const [i, item] of items.entries()) {
          this.k.inbox.save(item);
          this.k.timers.schedule("inbox.expire", expires, { inbox_id: item.id }, { key: TIMER_KEYS.inbox(item.id) });
          const call = calls[i]!;
          this.k.liveEvents.append([
            liveApproval(session.id, row.run.id, now, {
              inbox_id: item.id,
              tool_name: call.name,
              arguments: traceArgs(call.arguments),
              prompt: item.reason,
              expires_at: item.expires_at,
            }),
          ]);
        }
        this.store.addEvents(events);
      },
    );
  }

  /**
   * A remote A2A agent asked for input: its question joins the conversation and the run waits
   * (awaiting_human) for the session's next user message, which continues the remote task;
   * nothing within ESCALATION_TIMEOUT_MS fails the run with INPUT_TIMEOUT.
   */
  async awaitInput(
    row: RunRow,
    agent: AgentDefinition,
    question: HistoryItem,
    events: TraceEvent[],
    remote: { task_id: string; context_id: string },
  ): Promise<void> {
    const session = this.k.store.load()!;
    const now = this.k.now();
    const expires = now + ESCALATION_TIMEOUT_MS;
    const records: AuditRecord[] = [];
    const pending = {
      kind: "input" as const,
      agent: agent.name,
      task_id: remote.task_id,
      context_id: remote.context_id,
      question: question.content,
      expires_at: new Date(expires).toISOString(),
    };
    const next = this.steps.moved(
      { ...row, run: { ...row.run, agent: agent.name } },
      "awaiting_human",
      { pending },
      auditScope(session),
      agentActor(agent.name),
      now,
      records,
    );
    await this.k.commit(session, records, () => {
      this.steps.append(session, [question], now, row.run.id);
      this.store.save({ ...next, step: null, work: null });
      this.store.addEvents(events);
      this.k.timers.cancel(TIMER_KEYS.runResume);
      this.k.timers.schedule("run.outputs_expire", expires, { run_id: row.run.id }, { key: TIMER_KEYS.toolOutputs });
    });
  }

  /** The run waits for a person: an inbox item that expires after the agent's timeout (or the escalation timeout). */
  async awaitHuman(
    row: RunRow,
    session: SessionRecord,
    agent: AgentDefinition,
    callId: string | null,
    reason: string,
  ): Promise<void> {
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
      inboxItemCreated(scope, actor, now, {
        inbox_id: item.id,
        kind: item.kind,
        agent: agent.name,
        run_id: row.run.id,
        handoff_id: null,
        reason,
        expires_at: item.expires_at,
      }),
    ];
    const pending = {
      kind: "human" as const,
      inbox_id: item.id,
      agent: agent.name,
      tool_call_id: callId,
      expires_at: item.expires_at!,
    };
    const next = this.steps.moved(
      { ...row, run: { ...row.run, agent: agent.name } },
      "awaiting_human",
      { pending },
      scope,
      actor,
      now,
      records,
    );
    await this.k.commit(session, records, () => {
      this.k.inbox.save(item);
      this.store.save({ ...next, step: null, work: null });
      this.store.addEvents([
        traceEvent(next.run, "agent_start", agent.name, now, { executor: "human", outcome: "waiting for a person" }),
      ]);
      this.k.timers.schedule("inbox.expire", expires, { inbox_id: item.id }, { key: TIMER_KEYS.inbox(item.id) });
      this.k.timers.cancel(TIMER_KEYS.runResume);
    });
  }
}
