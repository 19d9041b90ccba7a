import { type Actor, type AuditRecord, SYSTEM_ACTOR } from "../../../src/audit/record";
import { inboxItemClosed } from "../../../src/audit/run-events";
import { err, ok, type Result } from "../../../src/errors";
import { closeItem } from "../../../src/runtime/inbox";
import { escalationOutput } from "../../../src/runtime/interpret";
import { traceArgs, traceEvent } from "../../../src/runtime/run-record";
import { approvalPending, type Denial, decideApproval, nextEffect } from "../../../src/runtime/tool-work";
import type { HistoryItem } from "../../../src/schemas/handoff";
import type { InboxAnswer, InboxItem } from "../../../src/schemas/inbox";
import type { Run, TraceEvent } from "../../../src/schemas/run";
import { agentDirectory } from "../../../src/services/registry-cache";
import { type SessionRecord, touch } from "../../../src/sessions/model";
import { resumedByOf } from "../../../src/telemetry/propagation";
import type { TraceContext } from "../../../src/telemetry/trace-context";
import { TIMER_KEYS } from "../../shared/timer-kinds";
import { auditScope, type SessionKernel } from "../session-kernel";
import type { RunLoop } from "./run-loop";
import type { RunSteps } from "./run-steps";
import type { RunRow } from "./run-store";

/**
 * A person's answers to what a run waits for in the inbox: a reply to a human turn or an
 * escalation, a decision on an approval — and what happens when nobody answers in time.
 * Each closes its inbox item and moves the run it paused, in one commit.
 */
export class RunInbox {
  constructor(
    private readonly k: Pick<SessionKernel, "commit" | "env" | "inbox" | "live" | "now" | "store" | "timers">,
    private readonly steps: RunSteps,
    private readonly loop: Pick<RunLoop, "waitFor" | "drive">,
  ) {}

  private get store() {
    return this.steps.store;
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
    resumedBy?: TraceContext,
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
      return this.decide(
        item,
        answer.decision,
        { by: "person", reason: answer.reason },
        actor,
        loaded.value,
        resumedBy,
      );
    return this.answer(item, answer.reply, actor, loaded.value, resumedBy);
  }

  /** A reply to a question: closes the item and completes the run it paused, with the reply as the agent's output. */
  private async answer(
    item: InboxItem,
    reply: string,
    actor: Actor,
    loaded: SessionRecord,
    resumedBy?: TraceContext,
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
      this.steps.append(session, items, now, paused?.run.id ?? null);
      if (next) {
        this.store.save({ ...next, work: null });
        this.store.addEvents([
          traceEvent(next.run, "agent_complete", next.run.agent, now, {
            executor: "human",
            outcome: "answered from the inbox",
            ...resumedByOf(resumedBy),
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
    resumedBy?: TraceContext,
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
          ...resumedByOf(resumedBy),
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
      this.steps.append(session, items, now, paused?.run.id ?? null);
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
      this.steps.append(session, items, now, paused?.run.id ?? null);
      if (next) {
        this.store.save(next);
        if (next.run.status === "running") this.steps.watch(next.run.id, now);
      }
    });
    if (next?.run.status === "running") void this.loop.drive(next.run.id);
  }
}
