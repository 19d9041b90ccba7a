import * as z from "zod";

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
  "compaction",
  "approval_required",
  "message",
  "run_started",
  "run_paused",
  "run_resumed",
  "run_completed",
  "run_failed",
  "run_cancelled",
  "handoff_status",
  "message.retracted",
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

/**
 * A piece of an agent's answer as the model writes it (docs/runs.md, Live events). Deltas are
 * not stored and carry no id, so a subscriber's cursor stays on the last stored event: the
 * stored `message` event with the same `message_id` holds the whole text once it is written.
 * A subscriber that connects while a message is being written gets its deltas so far first.
 */
export const LiveDelta = z.object({
  type: z.literal("message.delta"),
  session_id: z.string(),
  run_id: z.string(),
  at: z.string(),
  data: z.object({
    message_id: z.string(),
    agent: z.string(),
    /** 0, 1, 2, … within the message: a client joins them in this order. */
    index: z.number().int().min(0),
    delta: z.string(),
  }),
});
export type LiveDelta = z.infer<typeof LiveDelta>;
