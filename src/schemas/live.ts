import * as z from "zod";
import { HandoffMode, HandoffPolicy, HandoffStatus, HistoryItem } from "./handoff";
import { Run, TraceEvent } from "./run";

/**
 * Live session events (docs/runs.md, Live events): what SSE callers and WebSocket subscribers see as a
 * run happens. Every trace event is one (agent_start → agent_started, agent_complete →
 * agent_completed, the rest by their trace name), plus the run's own moments and every
 * message the conversation gains, and every status change of every handoff (a run's, the
 * API's, a trigger's or a webhook's). Each has an id that sorts in order, so a subscriber that
 * reconnects with `?after=<id>` misses nothing. Each type has one data schema (LIVE_EVENT_DATA
 * below), and /openapi.json publishes the union as the LiveEvent component.
 */

/** A run as its live events carry it: everything but its trace, which has events of its own. */
export const RunSummary = Run.omit({ events: true }).describe("A run without its trace events.");
export type RunSummary = z.infer<typeof RunSummary>;

/** `approval_required`: a tool call waits for a person's yes or no (one inbox item each). */
export const ApprovalRequired = z
  .object({
    inbox_id: z.string(),
    tool_name: z.string(),
    /** The call's arguments as the trace shows them (parsed JSON when they parse). */
    arguments: z.unknown(),
    prompt: z.string(),
    /** ISO 8601: when the item expires unanswered. */
    expires_at: z.string().nullable(),
  })
  .describe("A tool call waiting for a person's approval.");
export type ApprovalRequired = z.infer<typeof ApprovalRequired>;

/**
 * `handoff_status`: one step of one handoff, whatever started it, from its audit record.
 * A field the record does not carry is null.
 */
export const HandoffStatusChange = z
  .object({
    handoff_id: z.string(),
    /** The audit action of the step (`handoff.completed`, …). */
    action: z.string(),
    /** The status the handoff left (null: it was just initiated). */
    from: HandoffStatus.nullable(),
    /** The status it entered. */
    status: HandoffStatus.nullable(),
    source: z.string().nullable(),
    target: z.string().nullable(),
    mode: HandoffMode.nullable(),
    policy: HandoffPolicy.nullable(),
    reason: z.string().optional(),
    /** The error code of a step that failed. */
    error_code: z.string().optional(),
  })
  .describe("One status change of one handoff.");
export type HandoffStatusChange = z.infer<typeof HandoffStatusChange>;

/** `message.retracted`: what was streamed of `message_id` is withdrawn; clients drop what they showed. */
export const MessageRetracted = z
  .object({
    message_id: z.string(),
    agent: z.string(),
    /** Why: GUARDRAIL_FAILED, or RUN_INTERRUPTED after a restart. */
    code: z.string(),
  })
  .describe("A streamed answer withdrawn.");
export type MessageRetracted = z.infer<typeof MessageRetracted>;

/** Each live event type and the schema of its data: the one list of types. */
const LIVE_EVENT_DATA = {
  route: TraceEvent,
  agent_started: TraceEvent,
  llm_call: TraceEvent,
  tool_call: TraceEvent,
  handoff: TraceEvent,
  guardrail: TraceEvent,
  agent_completed: TraceEvent,
  agent_error: TraceEvent,
  compaction: TraceEvent,
  approval_required: ApprovalRequired,
  message: HistoryItem,
  run_started: RunSummary,
  run_paused: RunSummary,
  run_resumed: RunSummary,
  run_completed: RunSummary,
  run_failed: RunSummary,
  run_cancelled: RunSummary,
  handoff_status: HandoffStatusChange,
  "message.retracted": MessageRetracted,
} as const;

/** A stored live event's type (`message.delta`, never stored, is LiveDelta's). */
export type LiveEventType = keyof typeof LIVE_EVENT_DATA;
/** Every stored live event type, in the order of LIVE_EVENT_DATA. */
export const LIVE_EVENT_TYPES = Object.keys(LIVE_EVENT_DATA) as [LiveEventType, ...LiveEventType[]];
export const LiveEventType = z.enum(LIVE_EVENT_TYPES);

/** Sorts in the order the session's events happened. */
const EVENT_ID = z.string();

/** The envelope every live event shares, `type` and `data` aside. */
const ENVELOPE = {
  session_id: z.string(),
  /** The run it belongs to (null: the router's decision before any run, a handoff's steps). */
  run_id: z.string().nullable(),
  /** ISO 8601. */
  at: z.string(),
};

/** The union's member for one type: the envelope, the type as a literal, its data. */
function member<T extends LiveEventType>(type: T) {
  return z.object({ id: EVENT_ID, type: z.literal(type), ...ENVELOPE, data: LIVE_EVENT_DATA[type] });
}
type Member = { [T in LiveEventType]: ReturnType<typeof member<T>> }[LiveEventType];

/** A stored live event: its data's schema follows its `type`. */
export const LiveEvent = z
  .discriminatedUnion("type", LIVE_EVENT_TYPES.map(member) as unknown as [Member, ...Member[]])
  .describe("A live event of a session; `type` says what `data` holds (docs/runs.md, Live events).");
export type LiveEvent = z.infer<typeof LiveEvent>;

/** The live event of one type. */
export type LiveEventOf<T extends LiveEventType> = Extract<LiveEvent, { type: T }>;

/**
 * A live event as stored rows are read back: the envelope checked, the data as it was
 * written. Rows outlive the schema of their day (a run's `trace_id` came later), and every
 * row was written from a typed LiveEvent, so a replay does not refuse an older one.
 */
export const StoredLiveEvent = z.object({ id: EVENT_ID, type: LiveEventType, ...ENVELOPE, data: z.unknown() });
export type StoredLiveEvent = z.infer<typeof StoredLiveEvent>;

/**
 * A piece of an agent's answer as the model writes it (docs/runs.md, Live events). Deltas are
 * not stored and carry no id, so a subscriber's cursor stays on the last stored event: the
 * stored `message` event with the same `message_id` holds the whole text once it is written.
 * A subscriber that connects while a message is being written gets its deltas so far first.
 */
export const LiveDelta = z
  .object({
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
  })
  .describe(
    "A piece of an answer as the model writes it: not stored, no id (docs/runs.md, Answers as they are written).",
  );
export type LiveDelta = z.infer<typeof LiveDelta>;
