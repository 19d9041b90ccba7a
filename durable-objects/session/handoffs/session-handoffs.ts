import { type Actor, API_ACTOR, agentActor } from "../../../src/audit/record";
import { err, ok, type Result } from "../../../src/errors";
import { handoffErrors } from "../../../src/handoff";
import { advance, handoffError, must, newHandoffId } from "../../../src/handoff/record";
import type { StartHandoffArgs } from "../../../src/rpc/session";
import type { AgentDefinition } from "../../../src/schemas/agent";
import type { Handoff } from "../../../src/schemas/handoff";
import { agentDirectory } from "../../../src/services/registry-cache";
import type { SessionRecord } from "../../../src/sessions/model";
import type { Sql } from "../../shared/sql";
import type { SessionKernel } from "../session-kernel";
import { HandoffFlow, type Outcome } from "./handoff-flow";
import { HandoffLeases } from "./handoff-leases";
import { HandoffRecovery } from "./handoff-recovery";
import { HandoffStore } from "./handoff-store";

/**
 * The handoff feature of the SessionDO: the glue around the pure domain in src/handoff (validation,
 * the transition table and its effects, the flow rules). The
 * rules that make it safe:
 *
 * - The agents come from the registry directory before anything is locked; from the
 *   lock check to the first commit nothing awaits, so a concurrent request sees the
 *   lock (HANDOFF_IN_PROGRESS).
 * - Each external step is recorded before it is taken: the handoff row holds its status
 *   and the step about to run (`take_lease`, `activate`).
 * - The switch (current agent, stack, context, `completed`, the target's lease, audit,
 *   lease bookkeeping) is one transaction, with no await after the grant. Confirming the
 *   target's lease and freeing the source's happen after it, from rows written in it.
 * - A handoff found in a running status with no flow running in this instance is an
 *   orphan of a crash; `recoveryOf` says how it ends. Orphans are recovered on the next
 *   call, and by the sweep timer a restart schedules.
 *
 * This file takes the requests; handoff-flow.ts moves one handoff through its steps,
 * handoff-recovery.ts keeps track of the flows running here and ends the orphans, and
 * handoff-commit.ts writes each step.
 */

export class SessionHandoffs {
  readonly store: HandoffStore;
  readonly leases: HandoffLeases;
  readonly flow: HandoffFlow;
  readonly recovery: HandoffRecovery;

  constructor(
    /** Whole: it builds the flow, leases and recovery over it. */
    private readonly k: SessionKernel,
    sql: Sql,
  ) {
    this.store = new HandoffStore(sql, k.tables);
    this.leases = new HandoffLeases(k, this.store);
    this.flow = new HandoffFlow(k, this.store, this.leases);
    this.recovery = new HandoffRecovery(k, this.flow);
  }

  // ── Requests ──────────────────────────────────────────────────────────────

  async start(args: StartHandoffArgs, actor: Actor = API_ACTOR): Promise<Outcome> {
    let loaded = this.k.live();
    if (!loaded.ok) return loaded;
    await this.recovery.scan();
    let agents: ReadonlyMap<string, AgentDefinition>;
    try {
      agents = (await agentDirectory(this.k.env.DB, loaded.value.tenant)).byName;
    } catch (error) {
      return err("DEPENDENCY_UNAVAILABLE", "The agent registry could not be read.", { reason: String(error) });
    }
    loaded = this.k.live();
    if (!loaded.ok) return loaded;
    // From here to the first commit nothing awaits: the lock check and the lock are one step.
    const session = loaded.value;
    if (args.idempotency) {
      const seen = this.store.request(args.idempotency.key);
      if (seen) {
        if (seen.fingerprint !== args.idempotency.fingerprint) {
          return err(
            "IDEMPOTENCY_KEY_REUSED",
            `Idempotency-Key '${args.idempotency.key}' was already used with a different request.`,
            {
              idempotency_key: args.idempotency.key,
              handoff_id: seen.handoff_id,
            },
          );
        }
        if (seen.outcome !== null) return seen.outcome as Outcome;
        return (
          this.recovery.running(seen.handoff_id) ?? {
            ok: false,
            error: handoffErrors.inProgress(session.id, seen.handoff_id, "in flight"),
          }
        );
      }
    }
    const open = session.in_flight_handoff;
    if (open) return { ok: false, error: handoffErrors.inProgress(session.id, open.id, open.status) };
    const ctx = this.flow.ctx(session, actor);
    const id = newHandoffId(session.id, ctx.now);
    return this.recovery.run(id, () => this.flow.begin(id, session, args, agents, ctx));
  }

  async get(id: string): Promise<Result<Handoff>> {
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    await this.recovery.recoverOrphans();
    const row = this.store.get(id);
    return row ? ok(row.record) : err("HANDOFF_NOT_FOUND", `No handoff '${id}'.`, { handoff_id: id });
  }

  /** Only a pending handoff can be cancelled (HANDOFF_NOT_CANCELLABLE otherwise). */
  async cancel(id: string, actor: Actor = API_ACTOR): Promise<Result<Handoff>> {
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    const row = this.store.get(id);
    if (!row) return err("HANDOFF_NOT_FOUND", `No handoff '${id}'.`, { handoff_id: id });
    const ctx = this.flow.ctx(loaded.value, actor);
    const step = advance(row, { type: "cancel", reason: "cancelled by the caller" }, ctx);
    if (!step.ok) return handoffError(step.error, row.record);
    return ok((await this.flow.commitStep(loaded.value, step.value, ctx, { step: null, touch: true })).record);
  }

  /** A graceful handoff waiting for `agent` proceeds once it reports idle. */
  async onAgentStatus(agent: string, status: string): Promise<void> {
    if (status !== "idle" || !this.store.present()) return;
    const row = this.store.open().find((r) => r.record.status === "pending" && r.record.source === agent);
    const loaded = this.k.live();
    if (!row || !loaded.ok) return;
    const ctx = this.flow.ctx(loaded.value, agentActor(agent));
    await this.recovery.run(row.record.id, () =>
      this.flow.transfer(
        must(advance(row, { type: "transfer", reason: `'${agent}' reported idle` }, ctx)),
        loaded.value,
        ctx,
      ),
    );
  }

  /** See HandoffRecovery.onStart. */
  onStart(): Promise<void> {
    return this.recovery.onStart();
  }

  /** After the object's storage was wiped: nothing known about it stands. */
  forget(): void {
    this.store.forget();
    this.recovery.forget();
  }

  settleOrSweep(session?: SessionRecord): Promise<void> {
    return this.flow.settleOrSweep(session);
  }
}
