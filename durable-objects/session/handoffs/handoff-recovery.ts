import { SYSTEM_ACTOR } from "../../../src/audit/record";
import { err, ok } from "../../../src/errors";
import { recoveryOf } from "../../../src/handoff/flow-rules";
import type { HandoffRow } from "../../../src/handoff/record";
import { isOrphanable } from "../../../src/handoff/statuses";
import { TIMER_KEYS } from "../../shared/timer-kinds";
import type { SessionKernel } from "../session-kernel";
import { type HandoffFlow, type Outcome, SWEEP_RETRY_MS } from "./handoff-flow";

/**
 * Which handoff flows run in this instance, and what becomes of the ones that do not: a
 * handoff found in a running status with no flow here is an orphan of a crash, and
 * `recoveryOf` (src/handoff/flow-rules.ts) says how it ends. Orphans are recovered on the
 * next call, and by the sweep timer a restart schedules.
 */
export class HandoffRecovery {
  /** Handoffs whose flow runs in this instance; an open handoff not in here is an orphan. */
  private readonly active = new Set<string>();
  private readonly flows = new Map<string, Promise<Outcome>>();
  private recovering: Promise<void> | null = null;
  /** False once a scan found no orphan and no flow threw since (only a throw makes one in an instance). */
  private orphansPossible = true;

  constructor(
    private readonly k: Pick<SessionKernel, "now" | "timers">,
    private readonly flow: HandoffFlow,
  ) {}

  /** The flow of `id` running in this instance, if any. */
  running(id: string): Promise<Outcome> | undefined {
    return this.flows.get(id);
  }

  /**
   * At construction (a quick SQL read): when a previous instance left a flow or lease
   * work unfinished, the sweep is due at once, so the alarm finishes it even if no call comes.
   */
  async onStart(): Promise<void> {
    try {
      if (!this.flow.store.present()) return;
      if (this.flow.store.open().some((r) => isOrphanable(r.record.status)) || this.flow.leases.unsettled()) {
        this.k.timers.schedule("handoff.sweep", this.k.now(), null, { key: TIMER_KEYS.handoffSweep });
        await this.k.timers.arm();
      }
    } catch (error) {
      // A throw inside blockConcurrencyWhile resets the object; the next call recovers anyway.
      console.error("handoff start-up check failed", error);
    }
  }

  /** Runs a flow for `id`, marked as live in this instance; a throw leaves a sweep behind. */
  run(id: string, flow: () => Promise<Outcome>): Promise<Outcome> {
    this.active.add(id);
    const running = flow().catch(async (error: unknown) => {
      this.active.delete(id);
      this.orphansPossible = true;
      await this.flow.scheduleSweep(this.k.now() + SWEEP_RETRY_MS).catch(() => undefined);
      throw error;
    });
    const cleanup = () => {
      this.active.delete(id);
      this.flows.delete(id);
    };
    running.then(cleanup, cleanup);
    this.flows.set(id, running);
    return running;
  }

  /** Handoffs a crashed flow left behind (not running in this instance). */
  orphans(): HandoffRow[] {
    return this.flow.store.open().filter((r) => isOrphanable(r.record.status) && !this.active.has(r.record.id));
  }

  /** Finishes or rolls back every orphan; callers share one run. Never throws. */
  recoverOrphans(): Promise<void> {
    return this.scan() ?? Promise.resolve();
  }

  /** The recovery run, or null when there is nothing to recover (the caller need not await). */
  scan(): Promise<void> | null {
    if (this.recovering) return this.recovering;
    if (!this.orphansPossible || !this.flow.store.present()) return null;
    if (this.orphans().length === 0) {
      this.orphansPossible = false;
      return null;
    }
    this.recovering = (async () => {
      for (const orphan of this.orphans()) {
        await this.recoverOne(orphan.record.id).catch((error) =>
          console.error(`handoff ${orphan.record.id}: recovery failed`, error),
        );
      }
    })().finally(() => {
      this.recovering = null;
    });
    return this.recovering;
  }

  recoverOne(id: string): Promise<Outcome> {
    return this.run(id, async () => {
      const row = this.flow.store.get(id)!;
      const session = this.flow.currentSession();
      if (!session) return err("SESSION_NOT_FOUND", "No such session.");
      const ctx = this.flow.ctx(session, SYSTEM_ACTOR);
      const recovery = recoveryOf(row);
      switch (recovery.command) {
        case "roll_back": {
          const restart = {
            code: "INTERNAL" as const,
            message: "The handoff was interrupted by a restart before the switch and rolled back.",
          };
          return this.flow.rollBack(id, SYSTEM_ACTOR, restart, recovery.release_unknown_lease);
        }
        case "finish_timeout":
          return this.flow.finishTimeout(row, session, ctx);
        case "fail":
          return this.flow.fail(
            row,
            { code: "INTERNAL", message: "The handoff was interrupted by a restart before it changed anything." },
            session,
            ctx,
          );
        case "none":
          return ok({ handoff: row.record, accepted: row.record.status === "pending" });
      }
    });
  }

  /** After the object's storage was wiped: nothing known about it stands. */
  forget(): void {
    this.orphansPossible = true;
  }
}
