import { z } from "zod";
import { AgentName } from "./agent";
import { StoredError } from "./handoff";

/**
 * Runs (design §4a): a user message to a session starts a run — the current agent's turn,
 * repeated while the model calls tools, continued by the target after a handoff — until a
 * final output, a pause, or `max_turns`. The run and its trace live in the session's
 * Durable Object.
 */

export const RUN_STATUSES = ["running", "completed", "failed", "awaiting_human"] as const;
export const RunStatus = z.enum(RUN_STATUSES);
export type RunStatus = z.infer<typeof RunStatus>;

export const DEFAULT_MAX_TURNS = 10;

/** Trace event types (seed 001 §5). */
export const TraceEventType = z.enum(["route", "llm_call", "tool_call", "handoff", "guardrail", "agent_start", "agent_complete", "agent_error"]);
export type TraceEventType = z.infer<typeof TraceEventType>;

export const TraceDetails = z.object({
  model: z.string().optional(),
  tokens: z.object({ prompt: z.number(), completion: z.number(), total: z.number() }).optional(),
  tool_name: z.string().optional(),
  tool_args: z.unknown().optional(),
  from_agent: z.string().optional(),
  to_agent: z.string().optional(),
  handoff_reason: z.string().optional(),
  routing_method: z.string().optional(),
  routing_confidence: z.number().optional(),
  /** Relay additions: the turn's executor and the run step's outcome. */
  executor: z.enum(["model", "webhook", "human"]).optional(),
  outcome: z.string().optional(),
});
export type TraceDetails = z.infer<typeof TraceDetails>;

/** One step of a run, in the seed's trace format. Message content is not copied here. */
export const TraceEvent = z.object({
  event_id: z.string(),
  event_type: TraceEventType,
  /** ISO 8601. */
  timestamp: z.string(),
  session_id: z.string(),
  agent_name: AgentName,
  /** The run id: every event of one run shares it. */
  correlation_id: z.string(),
  details: TraceDetails,
  duration_ms: z.number().min(0),
  error: z.string().nullable(),
});
export type TraceEvent = z.infer<typeof TraceEvent>;

/** A page of a session's trace: events in order, and the event id the next page starts after (null: the last page). */
export interface TracePage {
  events: TraceEvent[];
  next_after: string | null;
}

/** What a paused run waits for. */
export const RunPending = z.object({
  kind: z.literal("human"),
  inbox_id: z.string(),
  agent: AgentName,
  /** The escalate_to_human call being answered; null when a human agent holds the turn. */
  tool_call_id: z.string().nullable(),
  /** ISO 8601: when the item expires unanswered. */
  expires_at: z.string(),
});
export type RunPending = z.infer<typeof RunPending>;

/** A run as the API returns it. */
export const Run = z.object({
  id: z.string(),
  session_id: z.string(),
  status: RunStatus,
  /** The agent whose turn it is (or was, once ended). */
  agent: AgentName,
  /** Model (or webhook) calls made so far. */
  turns: z.number().int().min(0),
  max_turns: z.number().int().min(1),
  /** The final answer and the agent that gave it (completed runs). */
  output: z.string().nullable(),
  output_agent: AgentName.nullable(),
  error: StoredError.optional(),
  pending: RunPending.nullable(),
  /** The handoffs the run made, in order. */
  handoffs: z.array(z.string()),
  started_at: z.string(),
  updated_at: z.string(),
  ended_at: z.string().nullable(),
  events: z.array(TraceEvent),
});
export type Run = z.infer<typeof Run>;
