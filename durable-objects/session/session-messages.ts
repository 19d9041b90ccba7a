import type { Actor } from "../../src/audit/record";
import { ok, type Result } from "../../src/errors";
import type { MessageOptions, MessageRun, MessageTask } from "../../src/rpc/session";
import { tenantRpc } from "../../src/rpc/stubs";
import type { Admission } from "../../src/rpc/tenant";
import type { Run } from "../../src/schemas/run";
import { admit, release } from "../../src/services/admissions";
import type { SchemaGate } from "../shared/sql";
import type { LiveHub } from "./live/live-hub";
import type { LiveStore } from "./live/live-store";
import { inProgress, type SessionRuns } from "./runs/session-runs";
import type { SessionKernel } from "./session-kernel";
import type { SessionTriggers } from "./triggers/session-triggers";

/** A run's admission, with the tenant it was counted for. */
interface Admitted {
  tenant: string;
  admission: Admission;
}

/**
 * A user message that runs the current agent (docs/runs.md): answered when the run settles,
 * started in the background, or streamed as Server-Sent Events. Its run is first admitted
 * against the tenant's quotas; then a message that needs capabilities the current agent lacks
 * is offered to the capability triggers.
 */
export class SessionMessages {
  constructor(
    private readonly k: Pick<SessionKernel, "env" | "live">,
    private readonly runs: SessionRuns,
    private readonly triggers: SessionTriggers,
    private readonly schema: Pick<SchemaGate, "ready">,
    private readonly liveEvents: Pick<LiveStore, "latest">,
    private readonly hub: LiveHub,
  ) {}

  async send(content: string, actor: Actor, task: MessageTask, options: MessageOptions): Promise<Result<MessageRun>> {
    // The run is admitted against the tenant's quotas before anything, triggers included, is done.
    const admitted = await this.admitRun(!!options.admitted);
    if (!admitted.ok) return admitted;
    await this.capabilityPoint(task);
    const started = await this.runs.startRun(content, actor, options);
    if (!started.ok) {
      this.giveBack(admitted.value);
      return started;
    }
    const { run } = started.value;
    if (options.background) {
      this.runs.driveInBackground(run.id);
      await this.noteRun(run);
      return started;
    }
    // The note goes beside the run, not before it: the caller hears of the run once both are done.
    const [answered] = await Promise.all([this.runs.answer(started.value), this.noteRun(run)]);
    return answered;
  }

  /** The run's events as they happen, then the final object. */
  async stream(
    content: string,
    actor: Actor,
    task: MessageTask,
    options: MessageOptions,
  ): Promise<Result<{ stream: ReadableStream<Uint8Array> }>> {
    const admitted = await this.admitRun(!!options.admitted);
    if (!admitted.ok) return admitted;
    await this.capabilityPoint(task);
    // A message that continues a paused run streams that run from here on, not from its start.
    const paused = this.schema.ready() ? this.runs.store.active()?.run.id : undefined;
    const from = paused ? this.liveEvents.latest() : "";
    const started = await this.runs.startRun(content, actor, options);
    if (!started.ok) {
      this.giveBack(admitted.value);
      return started;
    }
    const { message, run } = started.value;
    // Sent now and not waited for: the note leaves before the stream is handed back, and the
    // tenant's object takes its calls in the order they come, so a client that read the stream's
    // first event and lists the tenant's tasks finds the run (docs/a2a.md, ListTasks across contexts).
    void this.noteRun(run);
    // A client that goes away mid-run, with nobody else listening, cancels the run (and its model
    // call) — unless the run is detached from its stream.
    const stream: ReadableStream<Uint8Array> = this.hub.streamRun(
      run.id,
      () => this.runs.settled(run.id, message),
      () => {
        if (!options.detached && !this.hub.listening(run.id, stream))
          void this.runs.cancel(run.id, actor, "the client went away").catch(() => undefined);
      },
      run.id === paused ? from : "",
    );
    this.runs.driveInBackground(run.id);
    return ok({ stream });
  }

  /**
   * The tenant's admission of the run the message would start (docs/operations.md, Quotas), asked
   * before anything of the message is done: null when it starts none (it continues a run waiting
   * for input) or was admitted already; RUN_IN_PROGRESS without asking when a run is open. An
   * admission whose run then does not start is given back.
   */
  private async admitRun(admitted: boolean): Promise<Result<Admitted | null>> {
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    const open = this.runs.store.active();
    if (admitted || (open?.run.status === "awaiting_human" && open.run.pending?.kind === "input")) return ok(null);
    if (open && !this.runs.orphaned()) return inProgress(open);
    const tenant = loaded.value.tenant;
    const admission = await admit(this.k.env, tenant, { runs: true });
    return admission.ok ? ok({ tenant, admission: admission.value }) : admission;
  }

  /**
   * Tells the tenant's object that the run started (or went on), while it runs and before the
   * caller hears of it: a tenant-wide list then finds it at once, where D1 has it only when the
   * outbox flushes (docs/a2a.md, ListTasks). Best effort: a failure leaves the run to D1's list.
   */
  private async noteRun(run: Run): Promise<void> {
    const loaded = this.k.live();
    if (!loaded.ok) return;
    // The agent the run started with (a run's agent moves with its handoffs): its first agent_start.
    const agent = run.events.find((e) => e.event_type === "agent_start")?.agent_name ?? run.agent;
    try {
      const noted = await tenantRpc(this.k.env, loaded.value.tenant).noteRun(loaded.value.tenant, {
        run_id: run.id,
        session_id: run.session_id,
        agent,
      });
      if (!noted.ok) console.error(`run '${run.id}' not noted (${noted.error.code})`);
    } catch (error) {
      console.error(`run '${run.id}' not noted`, error);
    }
  }

  private giveBack(admitted: Admitted | null): void {
    if (admitted) void release(this.k.env, admitted.tenant, admitted.admission);
  }

  /** A message that needs capabilities the current agent lacks: capability triggers hand it on before it runs. */
  private async capabilityPoint(task: MessageTask): Promise<void> {
    if (task.required_capabilities?.length && this.schema.ready() && !this.runs.store.active()) {
      await this.triggers.fire({ type: "capability", required: task.required_capabilities });
    }
  }
}
