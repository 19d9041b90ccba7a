import type { AuditRecord } from "../audit/record";
import { ulid } from "../lib/ulid";
import type { HistoryItem } from "../schemas/handoff";
import type { LiveDelta, LiveEvent, LiveEventType } from "../schemas/live";
import type { Run, RunStatus, TraceEvent } from "../schemas/run";

/** Live events made from what a run records, pure: the session's object stores and sends them. */

const TRACE_TYPES: Record<TraceEvent["event_type"], LiveEventType> = {
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
export function liveFromTrace(event: TraceEvent): LiveEvent {
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

function live(type: LiveEventType, session_id: string, run_id: string | null, now: number, data: unknown): LiveEvent {
  return { id: `evt_${ulid(now).toLowerCase()}`, type, session_id, run_id, at: new Date(now).toISOString(), data };
}

/** The live event of a run's status change (null when the status did not change). */
export function liveRunChange(run: Run, before: RunStatus | null, now: number): LiveEvent | null {
  if (before === run.status) return null;
  const type: LiveEventType | null =
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
  return live(type, run.session_id, run.id, now, summary);
}

export function liveMessage(session_id: string, run_id: string | null, item: HistoryItem, now: number): LiveEvent {
  return live("message", session_id, run_id, now, item);
}

/** A piece of the answer `message_id` as the model writes it (not stored; see LiveDelta). */
export function liveDelta(
  session_id: string,
  run_id: string,
  now: number,
  data: { message_id: string; agent: string; index: number; delta: string },
): LiveDelta {
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
  data: { message_id: string; agent: string; code: string },
): LiveEvent {
  return live("message.retracted", session_id, run_id, now, data);
}

export function liveApproval(
  session_id: string,
  run_id: string,
  now: number,
  approval: { inbox_id: string; tool_name: string; arguments: unknown; prompt: string; expires_at: string | null },
): LiveEvent {
  return live("approval_required", session_id, run_id, now, approval);
}

/**
 * Every handoff transition as a live event, from its audit record (so each handoff a
 * subscriber can see, whatever started it, is seen at each step). The id derives from the
 * record's, so the event is written once however often the record is appended.
 */
export function liveHandoffStatus(records: readonly AuditRecord[]): LiveEvent[] {
  return records
    .filter((r) => r.handoff_id !== null && r.session_id !== null && r.action.startsWith("handoff."))
    .map((r) => {
      const d = r.details;
      const data = {
        handoff_id: r.handoff_id,
        action: r.action,
        from: d.from ?? null,
        status: d.to ?? null,
        source: d.source ?? null,
        target: d.target ?? null,
        mode: d.mode ?? null,
        policy: d.policy ?? null,
        ...(d.reason === undefined ? {} : { reason: d.reason }),
        ...(d.error_code === undefined ? {} : { error_code: d.error_code }),
      };
      return {
        id: `evt_${r.id.toLowerCase()}`,
        type: "handoff_status",
        session_id: r.session_id!,
        run_id: null,
        at: r.at,
        data,
      };
    });
}

/** One Server-Sent Events frame: the id (for Last-Event-ID), the type as the event name, the JSON. */
export function sseFrame(event: { id?: string; type: string; data: unknown }): string {
  return `${event.id ? `id: ${event.id}\n` : ""}event: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`;
}
