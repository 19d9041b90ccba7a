import type { Actor } from "../../src/audit/record";
import { ok, type Result } from "../../src/errors";
import type { MessageOptions, MessageRun, MessageTask } from "../../src/rpc/session";
import type { SchemaGate } from "../shared/sql";
import type { LiveHub } from "./live/live-hub";
import type { LiveStore } from "./live/live-store";
import type { SessionRuns } from "./runs/session-runs";
import type { SessionTriggers } from "./triggers/session-triggers";

/**
 * A user message that runs the current agent (docs/runs.md): answered when the run settles,
 * started in the background, or streamed as Server-Sent Events. A message that needs
 * capabilities the current agent lacks is first offered to the capability triggers.
 */
export class SessionMessages {
  constructor(
    private readonly runs: SessionRuns,
    private readonly triggers: SessionTriggers,
    private readonly schema: Pick<SchemaGate, "ready">,
    private readonly liveEvents: Pick<LiveStore, "latest">,
    private readonly hub: LiveHub,
  ) {}

  async send(content: string, actor: Actor, task: MessageTask, options: MessageOptions): Promise<Result<MessageRun>> {
    await this.capabilityPoint(task);
    if (!options.background) return this.runs.userMessage(content, actor, options.admitted);
    const started = await this.runs.startRun(content, actor, options.admitted);
    if (started.ok) this.runs.driveInBackground(started.value.run.id);
    return started;
  }

  /** The run's events as they happen, then the final object. */
  async stream(
    content: string,
    actor: Actor,
    task: MessageTask,
    options: MessageOptions,
  ): Promise<Result<{ stream: ReadableStream<Uint8Array> }>> {
    await this.capabilityPoint(task);
    // A message that continues a paused run streams that run from here on, not from its start.
    const paused = this.schema.ready() ? this.runs.store.active()?.run.id : undefined;
    const from = paused ? this.liveEvents.latest() : "";
    const started = await this.runs.startRun(content, actor, options.admitted);
    if (!started.ok) return started;
    const { message, run } = started.value;
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

  /** A message that needs capabilities the current agent lacks: capability triggers hand it on before it runs. */
  private async capabilityPoint(task: MessageTask): Promise<void> {
    if (task.required_capabilities?.length && this.schema.ready() && !this.runs.store.active()) {
      await this.triggers.fire({ type: "capability", required: task.required_capabilities });
    }
  }
}
