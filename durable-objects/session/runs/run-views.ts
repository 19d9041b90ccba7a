import { ok, type Result } from "../../../src/errors";
import type { RunList, RunListQuery, RunTaskView } from "../../../src/rpc/session";
import type { Run } from "../../../src/schemas/run";
import type { LiveHub } from "../live/live-hub";
import type { SessionKernel } from "../session-kernel";
import type { SessionRuns } from "./session-runs";

/**
 * Runs as another protocol reads them (an A2A task, docs/a2a.md): a run with the conversation
 * items of its time, the session's runs newest first, and an active run's live events from a
 * given event on. Reads only.
 */
export class RunViews {
  constructor(
    private readonly k: Pick<SessionKernel, "live" | "liveEvents" | "now" | "store">,
    private readonly runs: SessionRuns,
    private readonly hub: LiveHub,
  ) {}

  /** A run with the conversation items from its start to its end (or now), at most 200. */
  task(id: string): Result<RunTaskView> {
    const found = this.runs.get(id);
    if (!found.ok) return found;
    const run = found.value;
    const until = run.ended_at === null ? this.k.now() : Date.parse(run.ended_at);
    return ok({ run, items: this.k.store.historyBetween(Date.parse(run.started_at), until, 200) });
  }

  /** The session's runs that pass the query's filter, a page of them newest first, and how many pass it. */
  list(query: RunListQuery): Result<RunList> {
    const loaded = this.k.live();
    return loaded.ok ? ok(this.runs.store.page(query)) : loaded;
  }

  /** An active run's live events after `after` (else from now), then its result; no stream once it has ended. */
  subscribe(id: string, after?: string): Result<{ run: Run; stream: ReadableStream<Uint8Array> | null }> {
    const found = this.runs.get(id);
    if (!found.ok) return found;
    const run = found.value;
    if (run.ended_at !== null) return ok({ run, stream: null });
    const stream = this.hub.streamRun(
      id,
      () => {
        const now = this.runs.get(id);
        return now.ok && now.value.status !== "running" ? { run: now.value } : null;
      },
      () => undefined,
      after ?? this.k.liveEvents.latest(),
    );
    return ok({ run, stream });
  }
}
