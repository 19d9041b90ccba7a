import type { Actor } from "../../../src/audit/record";
import { err, ok, type Result } from "../../../src/errors";
import type { Handoff } from "../../../src/schemas/handoff";
import type { TriggerPoint } from "../../../src/schemas/trigger";
import { agentDirectory } from "../../../src/services/registry-cache";
import { firedTrigger, nextTimeoutMs } from "../../../src/triggers/fire";
import { TIMER_KEYS } from "../../shared/timer-kinds";
import type { TimerHandlers } from "../../shared/timers";
import type { SessionHandoffs } from "../handoffs/session-handoffs";
import type { RunStore } from "../runs/run-store";
import type { SessionKernel } from "../session-kernel";
import type { TriggerPoints } from "./trigger-queue";

/**
 * Triggered handoffs (docs/triggers.md): the session asks the current agent's triggers at each
 * evaluation point and starts the handoff one names, as actor `trigger:<type>`.
 *
 * The rule while the session is busy (a run active or a handoff in flight): the point is
 * queued and evaluated once the session is idle, against the agent and state of that
 * moment — never dropped, never doubled. A point is evaluated once, and one handoff runs at
 * a time; a queued condition point is kept once (re-checking the same state twice finds the
 * same answer). An explicit trigger is never queued: its caller gets RUN_IN_PROGRESS or
 * HANDOFF_IN_PROGRESS and may fire it again.
 */

/** How soon a busy session is asked again for its queued points. */
const BUSY_RETRY_MS = 2_000;

export interface Fired {
  /** The handoff the point started (null: no trigger fired, or it was queued). */
  handoff: Handoff | null;
  queued: boolean;
}

export class SessionTriggers {
  constructor(
    private readonly k: Pick<SessionKernel, "env" | "live" | "store" | "timers" | "transaction">,
    private readonly handoffs: SessionHandoffs,
    private readonly runs: Pick<RunStore, "active">,
    private readonly points: TriggerPoints,
  ) {}

  /** An evaluation point: evaluated now when the session is idle, else queued (see the rule above). */
  async fire(point: TriggerPoint): Promise<Result<Fired>> {
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    if (this.busy()) {
      this.k.transaction(() => this.points.enqueue(point));
      await this.k.timers.arm();
      return ok({ handoff: null, queued: true });
    }
    const fired = await this.evaluate(point);
    await this.arm();
    return fired.ok ? ok({ handoff: fired.value, queued: false }) : fired;
  }

  /**
   * An explicit trigger, fired by name: never queued; TRIGGER_NOT_FOUND when the current agent has
   * none for the target.
   */
  async fireExplicit(target: string): Promise<Result<Handoff>> {
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    const run = this.runs.active();
    if (run)
      return err("RUN_IN_PROGRESS", `Run ${run.run.id} is ${run.run.status}; fire the trigger when it has ended.`, {
        run_id: run.run.id,
        status: run.run.status,
      });
    if (loaded.value.in_flight_handoff)
      return err("HANDOFF_IN_PROGRESS", "A handoff is in flight in this session.", {
        handoff_id: loaded.value.in_flight_handoff,
      });
    const fired = await this.evaluate({ type: "explicit", target });
    if (!fired.ok) return fired;
    if (!fired.value)
      return err(
        "TRIGGER_NOT_FOUND",
        `Agent '${loaded.value.current_agent}' has no explicit trigger for a handoff to '${target}'.`,
        { agent: loaded.value.current_agent, target },
      );
    await this.arm();
    return ok(fired.value);
  }

  /**
   * The timeout trigger's timer: due when the current agent's shortest timeout would elapse
   * after the session's last progress (each change of the session moves its `updated_at`).
   */
  async arm(): Promise<void> {
    const session = this.k.store.load();
    if (session?.status !== "active") return;
    const directory = await agentDirectory(this.k.env.DB, session.tenant).catch(() => null);
    const agent = directory?.byName.get(session.current_agent);
    const timeout = agent && directory ? nextTimeoutMs({ agent, directory: directory.byName }) : null;
    this.k.transaction(() => {
      if (timeout === null) this.k.timers.cancel(TIMER_KEYS.triggerTimeout);
      else
        this.k.timers.schedule("trigger.timeout", session.updated_at + timeout, null, {
          key: TIMER_KEYS.triggerTimeout,
        });
    });
    await this.k.timers.arm();
  }

  timerHandlers(): TimerHandlers {
    return {
      "triggers.drain": async (_timer, now) => {
        if (!this.k.live().ok) return { type: "done" };
        if (this.busy()) return { type: "again", at: now + BUSY_RETRY_MS };
        for (let point = this.dequeue(); point !== null; point = this.dequeue()) {
          await this.evaluate(point);
          if (this.busy()) return { type: "again", at: now + BUSY_RETRY_MS };
        }
        await this.arm();
        return { type: "done" };
      },
      "trigger.timeout": async (_timer, now) => {
        const session = this.k.store.load();
        if (session?.status !== "active") return { type: "done" };
        if (this.busy()) return { type: "again", at: now + BUSY_RETRY_MS };
        const idle = now - session.updated_at;
        const fired = await this.evaluate({ type: "timeout", idle_ms: idle });
        if (fired.ok && fired.value) {
          await this.arm();
          return { type: "done" };
        }
        // Not yet (the session moved since the timer was set): look again when it would be due.
        const directory = await agentDirectory(this.k.env.DB, session.tenant).catch(() => null);
        const agent = directory?.byName.get(session.current_agent);
        const timeout = agent && directory ? nextTimeoutMs({ agent, directory: directory.byName }) : null;
        return timeout === null
          ? { type: "done" }
          : { type: "again", at: Math.max(now + 1_000, session.updated_at + timeout) };
      },
    };
  }

  private busy(): boolean {
    return this.runs.active() !== null || (this.k.store.load()?.in_flight_handoff ?? null) !== null;
  }

  /** Asks the current agent's triggers; starts the handoff one names. */
  private async evaluate(point: TriggerPoint): Promise<Result<Handoff | null>> {
    const session = this.k.store.load();
    if (session?.status !== "active") return ok(null);
    let directory: Awaited<ReturnType<typeof agentDirectory>>;
    try {
      directory = await agentDirectory(this.k.env.DB, session.tenant);
    } catch (error) {
      return err("DEPENDENCY_UNAVAILABLE", "The agent registry could not be read.", { reason: String(error) });
    }
    const agent = directory.byName.get(session.current_agent);
    if (!agent) return ok(null);
    const fired = firedTrigger(point, { agent, directory: directory.byName, state: session.state });
    if (!fired) return ok(null);
    const actor: Actor = { actor: `trigger:${fired.trigger.type}`, actor_type: "trigger" };
    const started = await this.handoffs.start(
      {
        request: {
          session_id: session.id,
          source_agent: agent.name,
          target_agent: fired.target,
          mode: "transfer",
          policy: "immediate",
          reason: fired.reason,
          timeout_s: 300,
          on_timeout: "fail",
        },
      },
      actor,
    );
    if (!started.ok) {
      console.warn(
        `session ${session.id}: a ${fired.trigger.type} trigger's handoff to '${fired.target}' was refused (${started.error.code})`,
      );
      return ok(null);
    }
    return ok(started.value.handoff);
  }

  private dequeue(): TriggerPoint | null {
    return this.k.transaction(() => this.points.shift());
  }
}
