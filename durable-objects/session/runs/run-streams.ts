import { ulid } from "../../../src/lib/ulid";
import type { OnText } from "../../../src/providers/types";
import { liveDelta } from "../../../src/runtime/live-events";
import type { HistoryItem } from "../../../src/schemas/handoff";
import type { SessionKernel } from "../session-kernel";

/**
 * The answers models are writing now, one per run at most: each has its message id (the id
 * the stored message will have), its agent, the text so far, and the signal that stops its
 * model call. Its pieces go out as `message.delta` live events as they come
 * (docs/runs.md, Live events). Cancelling a run takes what was written and stops the call.
 */

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

  constructor(private readonly k: Pick<SessionKernel, "deltas" | "now">) {}

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
}
