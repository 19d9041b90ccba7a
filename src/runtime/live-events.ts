import type { AuditRecord } from "../audit/record";
import type { SseEvent } from "../lib/sse";
import { ulid } from "../lib/ulid";
import { HandoffMode, HandoffPolicy, HandoffStatus, type HistoryItem } from "../schemas/handoff";
import {
  type ApprovalRequired,
  type HandoffStatusChange,
  type LiveDelta,
  LiveEvent,
  type LiveEventOf,
  type LiveEventType,
  type MessageRetracted,
} from "../schemas/live";
import type { Run, RunStatus, TraceEvent } from "../schemas/run";

/**
 * Live events made from what a run records, pure: the session's object stores and sends them.
 * Each builder returns the event of its type, typed by the LiveEvent schema (src/schemas/live.ts).
 * The frames they go out in are read back by the Worker's readers of a run's stream (A2A, MCP).
 */

/** The live types a trace event becomes: their data is the trace event. */
type TraceLiveType = {
  [T in LiveEventType]: LiveEventOf<T>["data"] extends TraceEvent ? T : never;
}[LiveEventType];

const TRACE_TYPES: Record<TraceEvent["event_type"], TraceLiveType> = {
  route: "route",
  agent_start: "agent_started",
  llm_call: "llm_call",
  tool_call: "tool_call",
  handoff: "handoff",
  guardrail: "guardrail",
  agent_complete: "agent_completed",
  agent_error: "agent_error",
  compaction: "compaction",
};

/** A trace event as a live event (same id, so trace and live positions agree). */
export function liveFromTrace(event: TraceEvent): LiveEventOf<TraceLiveType> {
  const run = event.correlation_id === event.session_id ? null : event.correlation_id;
  return {
    id: event.event_id,
    type: TRACE_TYPES[event.event_type],
    session_id: event.session_id,
    run_id: run,
    at: event.timestamp,
    data: event,
  };
}

/** What every new live event shares: a fresh id that sorts by `now`, the session, the run, the time. */
function envelope(session_id: string, run_id: string | null, now: number) {
  return { id: `evt_${ulid(now).toLowerCase()}`, session_id, run_id, at: new Date(now).toISOString() };
}

type RunLiveType = Extract<LiveEventType, `run_${string}`>;

/** The live event of a run's status change (null when the status did not change). */
export function liveRunChange(run: Run, before: RunStatus | null, now: number): LiveEventOf<RunLiveType> | null {
  if (before === run.status) return null;
  const type: RunLiveType =
    before === null
      ? "run_started"
      : run.status === "completed"
        ? "run_completed"
        : run.status === "failed"
          ? "run_failed"
          : run.status === "cancelled"
            ? "run_cancelled"
            : run.status === "running"
              ? "run_resumed"
              : "run_paused";
  const { events: _events, ...summary } = run;
  return { ...envelope(run.session_id, run.id, now), type, data: summary };
}

/** A message the conversation gained, as its live event. */
export function liveMessage(
  session_id: string,
  run_id: string | null,
  item: HistoryItem,
  now: number,
): LiveEventOf<"message"> {
  return { ...envelope(session_id, run_id, now), type: "message", data: item };
}

/** A piece of the answer `message_id` as the model writes it (not stored; see LiveDelta). */
export function liveDelta(session_id: string, run_id: string, now: number, data: LiveDelta["data"]): LiveDelta {
  return { type: "message.delta", session_id, run_id, at: new Date(now).toISOString(), data };
}

/**
 * What was streamed of `message_id` is withdrawn: its text will not be in the conversation
 * (an output guardrail rejected it). Clients drop what they showed of it.
 */
export function liveRetracted(
  session_id: string,
  run_id: string,
  now: number,
  data: MessageRetracted,
): LiveEventOf<"message.retracted"> {
  return { ...envelope(session_id, run_id, now), type: "message.retracted", data };
}

/** A tool call that waits for a person's approval (its inbox item), as its live event. */
export function liveApproval(
  session_id: string,
  run_id: string,
  now: number,
  approval: ApprovalRequired,
): LiveEventOf<"approval_required"> {
  return { ...envelope(session_id, run_id, now), type: "approval_required", data: approval };
}

/**
 * Every handoff transition as a live event, from its audit record (so each handoff a
 * subscriber can see, whatever started it, is seen at each step). The id derives from the
 * record's, so the event is written once however often the record is appended.
 */
export function liveHandoffStatus(records: readonly AuditRecord[]): LiveEventOf<"handoff_status">[] {
  const events: LiveEventOf<"handoff_status">[] = [];
  for (const r of records) {
    if (r.handoff_id === null || r.session_id === null || !r.action.startsWith("handoff.")) continue;
    events.push({
      id: `evt_${r.id.toLowerCase()}`,
      type: "handoff_status",
      session_id: r.session_id,
      run_id: null,
      at: r.at,
      data: handoffStep(r.handoff_id, r.action, r.details),
    });
  }
  return events;
}

/**
 * A handoff record's details as the step's data. The details are the state machine's
 * (src/handoff/state-machine.ts); a value that is not what the schema says is null, never
 * passed on as it is.
 */
function handoffStep(handoff_id: string, action: string, d: AuditRecord["details"]): HandoffStatusChange {
  const text = (value: unknown) => (typeof value === "string" ? value : null);
  const step: HandoffStatusChange = {
    handoff_id,
    action,
    from: HandoffStatus.safeParse(d.from).data ?? null,
    status: HandoffStatus.safeParse(d.to).data ?? null,
    source: text(d.source),
    target: text(d.target),
    mode: HandoffMode.safeParse(d.mode).data ?? null,
    policy: HandoffPolicy.safeParse(d.policy).data ?? null,
  };
  const reason = text(d.reason);
  const error_code = text(d.error_code);
  if (reason !== null) step.reason = reason;
  if (error_code !== null) step.error_code = error_code;
  return step;
}

/** One Server-Sent Events frame: the id (for Last-Event-ID), the type as the event name, the JSON. */
export function sseFrame(event: { id?: string; type: string; data: unknown }): string {
  return `${event.id ? `id: ${event.id}\n` : ""}event: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`;
}

const isText = (value: unknown): value is string => typeof value === "string";

/**
 * LiveDelta's checks, written out: a run sends one delta per piece of an answer, and the
 * schema's parse would cost more than the JSON.parse before it. A test holds the two to the
 * same answers.
 */
export function isLiveDelta(value: unknown): value is LiveDelta {
  if (typeof value !== "object" || value === null) return false;
  const { type, session_id, run_id, at, data } = value as Record<string, unknown>;
  if (type !== "message.delta" || !isText(session_id) || !isText(run_id) || !isText(at)) return false;
  if (typeof data !== "object" || data === null) return false;
  const { message_id, agent, index, delta } = data as Record<string, unknown>;
  return isText(message_id) && isText(agent) && Number.isSafeInteger(index) && (index as number) >= 0 && isText(delta);
}

/**
 * One frame of a run's stream (as {@link sseFrame} wrote it), read as a forward-compatible
 * reader does: the live event or delta it carries, or null for one this version cannot read —
 * a type it does not know, data not of its type's shape, text that is not JSON — which the
 * reader skips. A stream still ends at its `result` frame, which callers read themselves.
 */
export function readLiveFrame(frame: Pick<SseEvent, "event" | "data">): LiveEvent | LiveDelta | null {
  let value: unknown;
  try {
    value = JSON.parse(frame.data);
  } catch {
    return null;
  }
  if (frame.event === "message.delta") return isLiveDelta(value) ? value : null;
  const parsed = LiveEvent.safeParse(value);
  return parsed.success ? parsed.data : null;
}
