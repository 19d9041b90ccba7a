import type { components, operations, paths } from "./generated/openapi.ts";

/**
 * Names for the shapes a client handles most, all taken from the generated document types,
 * the live events included (the document's LiveEvent and LiveDelta components: docs/runs.md,
 * Live events).
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

/** `approval_required`'s data: a tool call waiting for a person's yes or no. */
export type ApprovalRequired = Schemas["ApprovalRequired"];
/** `handoff_status`'s data: one step of one handoff, whatever started it. */
export type HandoffStatus = Schemas["HandoffStatusChange"];
/** `message.retracted`'s data: what was streamed of a message is withdrawn. */
export type MessageRetracted = Schemas["MessageRetracted"];
/** A `run_*` event's data: the run without its trace events. */
export type RunSummary = Schemas["RunSummary"];

/**
 * A piece of an answer as the model writes it. It is not stored, so it has no id on the
 * wire; the client gives it `id: ""` so every event it hands over has one (docs/runs.md).
 */
export type LiveDelta = Schemas["LiveDelta"] & { id: string };

/** A live event of a type this client knows: the document's LiveEvent, or a piece of an answer. */
export type KnownLiveEvent = Schemas["LiveEvent"] | LiveDelta;
export type KnownLiveEventType = KnownLiveEvent["type"];

/** The data of each live event type this client knows. */
export type LiveEventData = { [T in KnownLiveEventType]: Extract<KnownLiveEvent, { type: T }>["data"] };

/** A live event of a type newer than this client: its data untyped. */
export interface UnknownLiveEvent {
  /** Sorts in the order the session's events happened. */
  id: string;
  type: string & {};
  session_id: string;
  run_id: string | null;
  /** ISO 8601. */
  at: string;
  data: unknown;
}

/**
 * A live event. Relay may add types (a newer server than this client): those arrive with
 * their data untyped, so a `switch` on `type` must keep a default branch.
 */
export type LiveEvent = KnownLiveEvent | UnknownLiveEvent;

/** Every known type, checked against the document's: a type missing or extra here does not compile. */
const KNOWN_LIVE_EVENT_TYPES: Record<KnownLiveEventType, true> = {
  route: true,
  agent_started: true,
  llm_call: true,
  tool_call: true,
  handoff: true,
  guardrail: true,
  agent_completed: true,
  agent_error: true,
  compaction: true,
  approval_required: true,
  message: true,
  run_started: true,
  run_paused: true,
  run_resumed: true,
  run_completed: true,
  run_failed: true,
  run_cancelled: true,
  handoff_status: true,
  "message.delta": true,
  "message.retracted": true,
};

/** True when this client knows the event's type: a `switch` on it then narrows `data` by type. */
export function isKnownLiveEvent(event: LiveEvent): event is KnownLiveEvent {
  return Object.hasOwn(KNOWN_LIVE_EVENT_TYPES, event.type);
}

/** Narrows a live event to a known type. */
export function isLiveEvent<T extends KnownLiveEventType>(
  event: LiveEvent,
  type: T,
): event is Extract<KnownLiveEvent, { type: T }> {
  return event.type === type;
}
