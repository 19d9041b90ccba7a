import type { components, operations, paths } from "./generated/openapi.ts";

/**
 * Names for the shapes a client handles most, all taken from the generated document types,
 * and the live events, which the document describes only as text (an SSE stream, WebSocket
 * frames): their shapes are those of docs/runs.md, Live events.
 */

export type { components, operations, paths };

type Schemas = components["schemas"];
export type Agent = Schemas["Agent"];
export type AgentDefinition = Schemas["AgentDefinition"];
export type Session = Schemas["Session"];
export type HistoryItem = Schemas["HistoryItem"];
export type Run = Schemas["Run"];
export type TraceEvent = Schemas["TraceEvent"];
export type Handoff = Schemas["Handoff"];
export type InboxItem = Schemas["InboxItem"];
export type InboxListItem = Schemas["InboxListItem"];
export type RouteDecision = Schemas["RouteDecision"];
export type RoutingConfig = Schemas["RoutingConfig"];
export type AuditRecord = Schemas["AuditRecord"];
/** A vault secret as the API shows it: its name, times and users, never its value. */
export type Secret = Schemas["Secret"];
/** `GET /v1/usage`: what the tenant used, bucket by bucket, and its quotas now. */
export type UsageReport = Schemas["UsageReport"];
/** One fact of a session's memory (docs/memory.md, Facts). */
export type MemoryFact = Schemas["MemoryFact"];
/** `GET /v1/sessions/:id/memory`: the facts by key and how full the memory is. */
export type MemoryView = Schemas["MemoryView"];

/** The answer of `POST /v1/sessions/:id/messages` for a user message: the message and its run. */
export type MessageRun = operations["postSessionsIdMessages"]["responses"][200]["content"]["application/json"];
/** `GET /v1/config/routing`: every resolved value, the layer each came from, the stored tenant layer. */
export type RoutingConfigView = operations["getConfigRouting"]["responses"][200]["content"]["application/json"];
/** `POST /v1/inbox/:id/resolve`. */
export type InboxResolve = components["schemas"]["InboxResolve"];

/** What a paused run waits for. */
export type RunPending = NonNullable<Run["pending"]>;

/** `approval_required`'s data. */
export interface ApprovalRequired {
  inbox_id: string;
  tool_name: string;
  arguments: unknown;
  prompt: string;
  expires_at: string | null;
}

/** `handoff_status`'s data: one step of one handoff, whatever started it. */
export interface HandoffStatus {
  handoff_id: string;
  action: string;
  from: string | null;
  status: string | null;
  source: string | null;
  target: string | null;
  mode: string | null;
  policy: string | null;
  reason?: string;
  error_code?: string;
}

/** The data of each live event type Relay sends today. */
export interface LiveEventData {
  route: TraceEvent;
  agent_started: TraceEvent;
  llm_call: TraceEvent;
  tool_call: TraceEvent;
  handoff: TraceEvent;
  guardrail: TraceEvent;
  agent_completed: TraceEvent;
  agent_error: TraceEvent;
  approval_required: ApprovalRequired;
  message: HistoryItem;
  run_started: Omit<Run, "events">;
  run_paused: Omit<Run, "events">;
  run_resumed: Omit<Run, "events">;
  run_completed: Omit<Run, "events">;
  run_failed: Omit<Run, "events">;
  run_cancelled: Omit<Run, "events">;
  handoff_status: HandoffStatus;
  /** A piece of an answer as the model writes it: not stored, so its `id` is "" (docs/runs.md). */
  "message.delta": { message_id: string; agent: string; index: number; delta: string };
  /** What was streamed of `message_id` is withdrawn (a guardrail refused it). */
  "message.retracted": { message_id: string; agent: string; code: string };
}
export type KnownLiveEventType = keyof LiveEventData;

interface LiveEventBase<T extends string, D> {
  /** Sorts in the order the session's events happened: resume after it ("" on a `message.delta`, which is not stored). */
  id: string;
  type: T;
  session_id: string;
  /** Null for events outside a run (the router's decision, a handoff's steps). */
  run_id: string | null;
  /** ISO 8601. */
  at: string;
  data: D;
}

/** A live event of a type this client knows. */
export type KnownLiveEvent = { [T in KnownLiveEventType]: LiveEventBase<T, LiveEventData[T]> }[KnownLiveEventType];

/**
 * A live event. Relay may add types (a newer server than this client): those arrive with
 * their data untyped, so a `switch` on `type` must keep a default branch.
 */
export type LiveEvent = KnownLiveEvent | LiveEventBase<string & {}, unknown>;

/** Narrows a live event to a known type. */
export function isLiveEvent<T extends KnownLiveEventType>(
  event: LiveEvent,
  type: T,
): event is Extract<KnownLiveEvent, { type: T }> {
  return event.type === type;
}
