import type { Actor, AuditRecord } from "../../../src/audit/record";
import { type ErrorBody, err, ok, type Result } from "../../../src/errors";
import { buildHandoffContext, commandAfterTimeout, returnTarget, validateHandoff } from "../../../src/handoff";
import { commandAfterValidation } from "../../../src/handoff/flow-rules";
import {
  type Advanced,
  advance,
  type HandoffRow,
  handoffError,
  joinSteps,
  maxDepthOf,
  must,
  newHandoff,
  type StepContext,
  stored,
} from "../../../src/handoff/record";
import { summaryItem } from "../../../src/memory/summary";
import type { Lease } from "../../../src/rpc/agent";
import type { HandoffAccepted, StartHandoffArgs } from "../../../src/rpc/session";
import { withoutCalls } from "../../../src/runtime/messages";
import type { AgentDefinition } from "../../../src/schemas/agent";
import type { HandoffContext, HistoryItem } from "../../../src/schemas/handoff";
import { agentCapacity } from "../../../src/services/agent-capacity";
import type { SessionRecord } from "../../../src/sessions/model";
import { TIMER_KEYS } from "../../shared/timer-kinds";
import { auditScope, type SessionKernel } from "../session-kernel";
import { type CommitKernel, commitStep, type StepOptions } from "./handoff-commit";
import { type HandoffLeases, LEASE_TTL_MS } from "./handoff-leases";
import type { HandoffStore } from "./handoff-store";

export type Outcome = Result<HandoffAccepted>;

/** What an idempotent replay of a request answered by the switch gets. */
const answered = (row: HandoffRow): Outcome => ok({ handoff: row.record, accepted: false });

/** When the sweep looks again at lease work a flow could not settle. */
export const SWEEP_RETRY_MS = 1_000;

/**
 * One handoff's way through the transition table, step by step (the rules that make it
 * safe are in session-handoffs.ts): validation and the decision, the lease, the switch, a
 * rollback or a failure, and a graceful handoff's timeout. Each step is one commit through
 * handoff-commit.ts.
 */
export class HandoffFlow {
  constructor(
    private readonly k: Pick<SessionKernel, "compactions" | "env" | "live" | "now"> & CommitKernel,
    readonly store: HandoffStore,
    readonly leases: HandoffLeases,
  ) {}

  /** initiated → validating, then the decision, with the agents validation reads. */
  begin(
    id: string,
    session: SessionRecord,
    args: StartHandoffArgs,
    agents: ReadonlyMap<string, AgentDefinition>,
    ctx: StepContext,
  ): Promise<Outcome> {
    const created = newHandoff(id, session.id, args.request, ctx, args.idempotency?.key, args.requested_by);
    if (args.hidden_calls?.length) created.row.hidden_calls = [...args.hidden_calls];
    const validating = must(advance(created.row, { type: "validate" }, ctx));
    const step = { ...validating, records: [...created.records, ...validating.records] };
    const key = args.idempotency;
    const remember = key ? () => this.store.addRequest(key.key, key.fingerprint, id, ctx.now) : undefined;
    return this.decide(step, args, agents, session, ctx, remember);
  }

  /** validating → failed | pending | transferring. */
  async decide(
    validating: Advanced,
    args: StartHandoffArgs,
    agents: ReadonlyMap<string, AgentDefinition>,
    session: SessionRecord,
    ctx: StepContext,
    remember?: () => void,
  ): Promise<Outcome> {
    const { request } = args;
    const named = request.mode === "return" ? returnTarget(session.handoff_stack) : (request.target_agent ?? null);
    const source = agents.get(request.source_agent) ?? null;
    const validated = validateHandoff({
      request,
      source,
      target: named === null ? undefined : (agents.get(named) ?? null),
      candidates:
        request.required_capabilities && source ? source.handoffs.flatMap((h) => agents.get(h.to) ?? []) : undefined,
      session: { current_agent: session.current_agent, handoff_stack: session.handoff_stack, state: session.state },
      maxDepth: maxDepthOf(session),
    });
    if (!validated.ok) return this.refuse(validating.row, validated.error, session, ctx, remember);
    const plan = validated.value;
    const row: HandoffRow = {
      ...validating.row,
      plan,
      capacity: agents.get(plan.target)?.max_concurrent_sessions ?? null,
    };
    const wait = commandAfterValidation(request.policy, this.k.store.agentStatus()[plan.source]) === "wait";
    const command = wait
      ? { type: "wait" as const, now: ctx.now, reason: `waiting for '${plan.source}' to finish its turn` }
      : { type: "transfer" as const };
    const step = joinSteps(validating, must(advance(row, command, ctx, { target: plan.target })));
    if (wait) {
      const done = await this.commitStep(session, step, ctx, {
        step: null,
        touch: true,
        before: remember,
        answer: (r) => ok({ handoff: r.record, accepted: true }),
      });
      return ok({ handoff: done.record, accepted: true });
    }
    return this.transfer(step, session, ctx, remember);
  }

  /**
   * → transferring, then the switch. Without a lease to take, both in one commit; with one,
   * the step is recorded first, then its `take_lease` effect is carried out, then the switch
   * commits. The flow owns its row from here.
   */
  async transfer(step: Advanced, session: SessionRecord, ctx: StepContext, before?: () => void): Promise<Outcome> {
    const take = step.effects.find((e) => e.type === "take_lease");
    // No lease to take, so no step outside this object: the switch commits with this step, in one transaction.
    if (!take) return this.switchAt(session, step, ctx, before);
    const row = await this.commitStep(session, step, ctx, { step: "take_lease", touch: true, before });
    const id = row.record.id;
    this.k.checkpoint("after_intent");
    let granted: Result<Lease>;
    try {
      granted = await agentCapacity(this.k.env, session.tenant, take.agent, take.capacity).acquire(
        session.id,
        id,
        LEASE_TTL_MS,
      );
    } catch (error) {
      granted = err("DEPENDENCY_UNAVAILABLE", `'${take.agent}' could not be reached.`, { reason: String(error) });
    }
    // Unreachable or past its deadline, the grant may still have happened: free whatever the session holds there.
    if (!granted.ok)
      return this.rollBack(id, ctx.actor, granted.error, granted.error.code === "DEPENDENCY_UNAVAILABLE");
    this.k.checkpoint("after_lease");
    const lease = { lease_id: granted.value.lease_id, fencing_token: granted.value.fencing_token };
    // No await from here to the switch, which writes the lease; a rollback writes it first, to free it by id.
    this.k.checkpoint("before_commit");
    return this.activate({ ...row, lease, step: "activate" }, ctx.actor);
  }

  /**
   * The switch of a handoff whose transferring step is not committed yet (no lease to take):
   * both steps in one transaction, so a failure leaves no trace to roll back.
   */
  async switchAt(
    session: SessionRecord,
    transferring: Advanced,
    ctx: StepContext,
    before?: () => void,
  ): Promise<Outcome> {
    const completed = this.completeStep(transferring.row, ctx);
    const done = await this.commitStep(session, joinSteps(transferring, completed.step), ctx, {
      step: null,
      touch: true,
      context: completed.context,
      before,
      answer: answered,
    });
    this.k.checkpoint("after_commit");
    await this.settleOrSweep(session);
    return ok({ handoff: done.record, accepted: false });
  }

  /** transferring → completed, with the context the target receives (from the session's history as it is now). */
  completeStep(row: HandoffRow, ctx: StepContext): { step: Advanced; context: HandoffContext } {
    const hidden = new Set(row.hidden_calls);
    const history =
      row.record.request.conversation_history !== undefined
        ? undefined
        : row.plan!.filter?.history === "summary"
          ? withoutCalls(this.sinceSummary(row.plan!.source), hidden)
          : withoutCalls(this.sessionHistory(), hidden);
    const context = buildHandoffContext({
      request: row.record.request,
      validated: row.plan!,
      handoff_id: row.record.id,
      now: ctx.now,
      session_history: history,
      history_length: this.k.store.historyLength(),
    });
    return { step: must(advance(row, { type: "complete" }, ctx, { context })), context };
  }

  /**
   * What `history: summary` passes on (docs/memory.md, Across handoffs): the source's latest
   * compaction and the messages after it; with no compaction yet, the whole conversation (the
   * filter nests it into one message either way).
   */
  sinceSummary(source: string): HistoryItem[] {
    const held = this.k.store.load()?.last_handoff_context;
    const handoffId = held?.to_agent === source ? held.metadata.handoff_id : null;
    const compaction = this.k.compactions.latest(source, handoffId);
    if (!compaction) return this.sessionHistory();
    const after = Math.max(compaction.through_seq, handoffId ? (held?.metadata.history_length ?? 0) : 0);
    return [summaryItem(compaction), ...this.k.store.history({ after }).map((r) => r.item)];
  }

  /** The conversation so far (no read when the kept length says it is empty). */
  sessionHistory(): HistoryItem[] {
    return this.k.store.historyLength() === 0 ? [] : this.k.store.history().map((r) => r.item);
  }

  /**
   * The switch after a granted lease: current agent, stack, context, the target's lease and
   * `completed` in one transaction; then the leases.
   */
  async activate(row: HandoffRow, actor: Actor): Promise<Outcome> {
    const id = row.record.id;
    const loaded = this.k.live();
    if (!loaded.ok) return this.rollBack(id, actor, loaded.error, false, row);
    const session = loaded.value;
    const ctx = this.ctx(session, actor);
    let done: HandoffRow;
    try {
      const { step, context } = this.completeStep(row, ctx);
      done = await this.commitStep(session, step, ctx, { step: null, touch: true, context, answer: answered });
    } catch (error) {
      // The switch either committed (and only arming the alarm failed) or changed nothing.
      const after = this.store.get(id);
      if (after?.record.status !== "completed") {
        return this.rollBack(
          id,
          actor,
          {
            code: "INTERNAL",
            message: "The target could not be activated; the handoff was rolled back.",
            details: { reason: String(error) },
          },
          false,
          row,
        );
      }
      done = after;
    }
    this.k.checkpoint("after_commit");
    await this.settleOrSweep(session);
    return ok({ handoff: done.record, accepted: false });
  }

  /**
   * transferring → rolled_back: target lease freed, source restored, lock released.
   * `leased`: the row with a granted lease not written yet; the rollback writes it and frees the lease by id.
   */
  async rollBack(
    id: string,
    actor: Actor,
    error: ErrorBody,
    releaseBySession: boolean,
    leased?: HandoffRow,
  ): Promise<Outcome> {
    const before = leased ?? this.store.get(id)!;
    const session = this.currentSession();
    if (!session) return handoffError(error, before.record);
    // With the lock still held, so no later handoff's lease at the same agent can be hit.
    if (releaseBySession)
      await this.leases.releaseBySession(session.tenant, session.id, before.record.target!, before.capacity);
    const row = leased ?? this.store.get(id)!;
    if (row.record.status !== "transferring") return handoffError(error, row.record);
    const fresh = this.currentSession()!;
    const ctx = this.ctx(fresh, actor);
    const step = must(advance(row, { type: "roll_back", reason: error.message }, ctx, { error: stored(error) }));
    const done = await this.commitStep(fresh, step, ctx, {
      step: null,
      touch: true,
      answer: (r) => handoffError(error, r.record),
    });
    await this.settleOrSweep(fresh);
    return handoffError(error, done.record);
  }

  /** validating → failed: nothing was changed, so nothing to undo. */
  async fail(
    row: HandoffRow,
    error: ErrorBody,
    session: SessionRecord,
    ctx: StepContext,
    records: AuditRecord[] = [],
    before?: () => void,
  ): Promise<Outcome> {
    const start =
      row.record.status === "initiated"
        ? must(advance(row, { type: "validate" }, ctx))
        : { row, records: [], effects: [] };
    const step = must(advance(start.row, { type: "fail", reason: error.code }, ctx, { error: stored(error) }));
    const all = { ...step, records: [...records, ...start.records, ...step.records] };
    const done = await this.commitStep(session, all, ctx, {
      step: null,
      touch: true,
      before,
      answer: (r) => handoffError(error, r.record),
    });
    return handoffError(error, done.record);
  }

  /**
   * validating → failed for a request validation refused: it changed nothing, so the refusal
   * is one audit record, `handoff.failed` with the request's reason and the error's code (not
   * the initiated and validated records before it); the handoff row keeps every transition.
   */
  private async refuse(
    row: HandoffRow,
    error: ErrorBody,
    session: SessionRecord,
    ctx: StepContext,
    before?: () => void,
  ): Promise<Outcome> {
    const step = must(
      advance(
        row,
        { type: "fail", reason: error.code },
        ctx,
        { error: stored(error) },
        { request_reason: row.record.request.reason },
      ),
    );
    const done = await this.commitStep(session, step, ctx, {
      step: null,
      touch: true,
      before,
      answer: (r) => handoffError(error, r.record),
    });
    return handoffError(error, done.record);
  }

  /** One step through the kernel's write path (handoff-commit.ts). */
  commitStep(session: SessionRecord, step: Advanced, ctx: StepContext, options: StepOptions): Promise<HandoffRow> {
    return commitStep(this.k, this.store, session, step, ctx, options);
  }

  /** pending → timed_out → failed | escalated, as the request's on_timeout says. */
  async finishTimeout(row: HandoffRow, session: SessionRecord, ctx: StepContext): Promise<Outcome> {
    const first =
      row.record.status === "pending"
        ? must(
            advance(
              row,
              {
                type: "time_out",
                reason: `'${row.record.source}' was still busy after ${row.record.request.timeout_s} s`,
              },
              ctx,
            ),
          )
        : { row, records: [], effects: [] };
    const command = commandAfterTimeout(row.record.request.on_timeout);
    const ended = must(
      advance(
        first.row,
        { type: command, reason: command === "escalate" ? "escalated to the session inbox" : "failed on timeout" },
        ctx,
      ),
    );
    const done = await this.commitStep(session, joinSteps(first, ended), ctx, { step: null });
    return ok({ handoff: done.record, accepted: false });
  }

  async scheduleSweep(at: number): Promise<void> {
    this.k.timers.schedule("handoff.sweep", at, null, { key: TIMER_KEYS.handoffSweep, ifExists: "keep" });
    await this.k.timers.arm();
  }

  /** `session` (for its tenant and id) saves a read when the caller has it. */
  async settleOrSweep(session?: SessionRecord): Promise<void> {
    if (!(await this.leases.settle(session))) await this.scheduleSweep(this.k.now() + SWEEP_RETRY_MS);
  }

  currentSession(): SessionRecord | null {
    return this.k.store.load();
  }

  ctx(session: SessionRecord, actor: Actor): StepContext {
    return {
      scope: auditScope(session),
      actor,
      now: this.k.now(),
      leased_agent: this.store.sessionLease()?.agent ?? null,
    };
  }
}
