import { ulid } from "../../../src/lib/ulid";
import type { OnText } from "../../../src/providers/types";
import { liveDelta, liveRetracted } from "../../../src/runtime/live-events";
import type { HistoryItem } from "../../../src/schemas/handoff";
import type { SessionKernel } from "../session-kernel";

/**
 * The answers models are writing now, one per run at most: each has its message id (the id
 * the stored message will have), its agent, the text so far, and the signal that stops its
 * model call. Its pieces go out as `message.delta` live events as they come
 * (docs/runs.md, Live events). Cancelling a run takes what was written and stops the call.
 *
 * The first piece of each answer also leaves a mark in the object's storage (its message
 * id): pieces are not stored, so after a crash only the mark tells that subscribers saw an
 * answer that may never be stored. The output gate holds the piece until the mark is
 * durable, so no client sees a piece the mark does not cover. The resumed run reads it back
 * (`retractUnstored`) and retracts that answer before anything new streams.
 */

/** The storage key of the answer whose pieces went out last: one per session (one run at a time). */
const STREAMED_KEY = "run.streamed";

/** An answer whose pieces went out: what a resumed run checks was stored. */
export interface StreamedMark {
  run_id: string;
  message_id: string;
  agent: string;
}

export interface Writing {
  readonly message_id: string;
  readonly agent: string;
  /** Hands a piece of the answer out (and keeps it). */
  readonly onText: OnText;
  /** Aborted when the run is cancelled. */
  readonly signal: AbortSignal;
  /** The text so far. */
  text(): string;
}

interface Open {
  message_id: string;
  agent: string;
  text: string;
  index: number;
  controller: AbortController;
}

/** What a model had written of an answer that will not be finished: kept, marked as cut (none when nothing came). */
export function cutMessage(writing: Pick<Writing, "message_id" | "agent" | "text">): HistoryItem[] {
  const text = writing.text();
  return text === ""
    ? []
    : [{ id: writing.message_id, role: "assistant", agent: writing.agent, type: "message", content: text, cut: true }];
}

export class RunStreams {
  private readonly open = new Map<string, Open>();

  constructor(
    private readonly k: Pick<SessionKernel, "commit" | "deltas" | "liveEvents" | "now" | "storage" | "store">,
  ) {}

  /** A new answer of `agent` in the run, replacing any the run had. */
  begin(sessionId: string, runId: string, agent: string): Writing {
    this.end(runId);
    const now = this.k.now();
    const entry: Open = {
      message_id: `msg_${ulid(now)}`,
      agent,
      text: "",
      index: 0,
      controller: new AbortController(),
    };
    this.open.set(runId, entry);
    return {
      message_id: entry.message_id,
      agent,
      signal: entry.controller.signal,
      text: () => entry.text,
      onText: (delta) => {
        if (this.open.get(runId) !== entry || delta === "") return;
        entry.text += delta;
        const index = entry.index++;
        // Synchronous, and the output gate holds the piece below until it is durable.
        if (index === 0)
          this.k.storage.kv.put<StreamedMark>(STREAMED_KEY, { run_id: runId, message_id: entry.message_id, agent });
        this.k.deltas.delta(
          liveDelta(sessionId, runId, this.k.now(), { message_id: entry.message_id, agent, index, delta }),
        );
      },
    };
  }

  /** The answer is written (stored whole) or abandoned: no more pieces of it go out. */
  end(runId: string): void {
    if (this.open.delete(runId)) this.k.deltas.endMessage(runId);
  }

  /** Stops the run's model call; what it had written so far (null: nothing under way). */
  abort(runId: string): { message_id: string; agent: string; text: string } | null {
    const entry = this.open.get(runId);
    if (!entry) return null;
    this.end(runId);
    entry.controller.abort(new DOMException("The run was cancelled.", "AbortError"));
    return { message_id: entry.message_id, agent: entry.agent, text: entry.text };
  }

  /**
   * After a restart, before the run resumes: an answer of `runId` whose pieces went out and
   * that was never stored is withdrawn by a stored `message.retracted` event (code
   * RUN_INTERRUPTED), published before anything new streams, so a client drops what it
   * showed (docs/runs.md, Restarts). The mark goes either way.
   */
  async retractUnstored(runId: string): Promise<void> {
    const mark = this.k.storage.kv.get<StreamedMark>(STREAMED_KEY);
    const session = this.k.store.load();
    if (mark?.run_id !== runId || !session) return;
    const event = this.k.store.hasMessage(mark.message_id)
      ? null
      : liveRetracted(session.id, runId, this.k.now(), {
          message_id: mark.message_id,
          agent: mark.agent,
          code: "RUN_INTERRUPTED",
        });
    await this.k.commit(session, [], () => {
      if (event) this.k.liveEvents.append([event]);
      this.forget();
    });
  }

  /** Drops the mark: its answer is stored, retracted, or was never streamed by this run. */
  forget(): void {
    this.k.storage.kv.delete(STREAMED_KEY);
  }
}
