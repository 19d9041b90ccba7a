import { z } from "zod";

/**
 * Live session events (docs/runs.md, Live events): what SSE callers and WebSocket subscribers see as a
 * run happens. Every trace event is one (agent_start → agent_started, agent_complete →
 * agent_completed, the rest by their trace name), plus the run's own moments and every
 * message the conversation gains, and every status change of every handoff (a run's, the
 * API's, a trigger's or a webhook's). Each has an id that sorts in order, so a subscriber that
 * reconnects with `?after=<id>` misses nothing.
 */

export const LIVE_EVENT_TYPES = [
  "route",
  "agent_started",
  "llm_call",
  "tool_call",
  "handoff",
  "guardrail",
  "agent_completed",
  "agent_error",
  "approval_required",
  "message",
  "run_started",
  "run_paused",
  "run_resumed",
  "run_completed",
  "run_failed",
  "handoff_status",
] as const;
export const LiveEventType = z.enum(LIVE_EVENT_TYPES);
export type LiveEventType = z.infer<typeof LiveEventType>;

export const LiveEvent = z.object({
  /** Sorts in the order the session's events happened. */
  id: z.string(),
  type: LiveEventType,
  session_id: z.string(),
  /** The run it belongs to (null: the router's decision before any run). */
  run_id: z.string().nullable(),
  /** ISO 8601. */
  at: z.string(),
  /** A trace event, a history item, a run, or an approval, by type. */
  data: z.unknown(),
});
export type LiveEvent = z.infer<typeof LiveEvent>;
