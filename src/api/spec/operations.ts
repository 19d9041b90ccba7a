import * as z from "zod";
import type { ErrorCode } from "../../errors/codes";
import { A2aAgentCard, JsonRpcRequest, JsonRpcResponse } from "../../schemas/a2a";
import { AgentDefinition, AgentName, StoredAgent } from "../../schemas/agent";
import { AgentLoad } from "../../schemas/agent-load";
import {
  AddedMessage,
  CapabilityMatchPage,
  EventFired,
  Health,
  InboxResolved,
  MessageRun,
  Page,
  RouteStats,
  RoutingConfigView,
  RunOnly,
  SentMessage,
  SessionAuditPage,
  WebhookAnswer,
} from "../../schemas/api";
import {
  BlockingStatus,
  CollabMessage,
  CollabMessageInput,
  Collaboration,
  CollaborationComplete,
  CollaborationCreate,
  EscalationResolve,
  Fanout,
  FanoutStart,
} from "../../schemas/collaboration";
import { EventSubscription, EventSubscriptionInput } from "../../schemas/events";
import { Handoff, HandoffIndexRow, HandoffRequest } from "../../schemas/handoff";
import { InboxIndexRow, InboxItem, InboxResolve } from "../../schemas/inbox";
import { LiveDelta, LiveEvent } from "../../schemas/live";
import { CompactionList } from "../../schemas/memory";
import { RouteDecision, RouteRequest, RoutingConfigPatch } from "../../schemas/routing";
import { Run, ToolOutputs, TraceEvent } from "../../schemas/run";
import {
  AgentStatusUpdate,
  SessionCreate,
  SessionEvent,
  SessionIndexRow,
  SessionMessage,
  SessionStatePatch,
  SessionView,
  StoredHistoryItem,
  TriggerFire,
} from "../../schemas/session";
import { ConfigView, SigningSecret, SigningSecretRotate } from "../../schemas/signing";
import { McpToolListing, StoredTool, ToolDefinition, ToolName } from "../../schemas/tool";
import { UsageReport } from "../../schemas/usage";
import { WebhookPayload, WebhookStats } from "../../schemas/webhook";
import { AgentListQuery } from "../agents";
import { AuditPage, AuditQuery } from "../audit";
import { CapabilityMatchQuery } from "../capabilities";
import { PageQuery } from "../handoffs";
import { InboxListQuery } from "../inbox";
import { EVENT_ID } from "../positions";
import { HistoryQuery, SessionAuditQuery, SessionListQuery, TraceQuery } from "../session-lists";
import { ToolListQuery } from "../tools";
import { UsageQuery } from "../usage";
import { mcpOperations } from "./mcp-operations";
import { memoryOperations } from "./memory-operations";
import type { Answer, Operation } from "./operation";
import { operatorOperations } from "./operator-operations";
import { replayOperations } from "./replay-operations";
import { telemetryOperations } from "./telemetry-operations";
import { vaultOperations } from "./vault-operations";

/**
 * Every route the API serves, described once: what it takes (path parameters, query, body,
 * headers), what it answers (a schema per status) and which error codes it may answer
 * with. The OpenAPI document is built from this table, and the test suite checks both
 * ways that it matches the app: every mounted route is here, and every response a test
 * receives fits the schema listed for its status.
 */

export { type Answer, type Method, type Operation, TAGS, type Tag } from "./operation";

// Error codes shared by kinds of route.
const AUTH: ErrorCode[] = [
  "UNAUTHORIZED",
  "AUTH_NOT_CONFIGURED",
  "QUOTA_EXCEEDED",
  "DEPENDENCY_UNAVAILABLE",
  "INTERNAL",
];
const BODY: ErrorCode[] = ["INVALID_JSON", "VALIDATION_FAILED", "JSON_TOO_DEEP", "PAYLOAD_TOO_LARGE"];
const LIST: ErrorCode[] = ["VALIDATION_FAILED", "INVALID_CURSOR"];
/** A definition that names vault secrets: one its tenant lacks, or a vault without its key. */
const SECRETS: ErrorCode[] = ["UNKNOWN_SECRET", "VAULT_UNAVAILABLE"];
const SESSION: ErrorCode[] = ["SESSION_NOT_FOUND", "SESSION_EXPIRED"];
/** What a run's start or resumption can be refused with; a run that fails still answers 200 with its error. */
const RUN: ErrorCode[] = ["RUN_IN_PROGRESS", "RUN_INTERRUPTED"];
/** Why a handoff is refused, rolled back or fails. */
const HANDOFF: ErrorCode[] = [
  "AGENT_NOT_FOUND",
  "HANDOFF_IN_PROGRESS",
  "NOT_CURRENT_AGENT",
  "IDEMPOTENCY_KEY_REUSED",
  "HANDOFF_NOT_ALLOWED",
  "CONDITION_NOT_MET",
  "MAX_DEPTH_EXCEEDED",
  "CIRCULAR_HANDOFF",
  "CAPABILITY_MISMATCH",
  "AGENT_UNAVAILABLE",
  "NOTHING_TO_RETURN",
  "INVALID_CONDITION",
];

const AgentParam = { name: AgentName };
const ToolParam = { name: ToolName };
const Id = (what: string) => ({ id: z.string().describe(what) });
const SessionParam = Id("The session's id (ses_…).");
const CollaborationParam = Id("The collaboration's id (col_…).");

const json = (description: string, schema: z.ZodType): Answer => ({ description, schema });
const noContent: Answer = { description: "Done; no body." };

export const OPERATIONS: Operation[] = [
  // System
  {
    method: "get",
    path: "/health",
    tag: "system",
    auth: false,
    summary: "Liveness",
    answers: { 200: json("Relay answers.", Health) },
    errors: [],
  },
  {
    method: "get",
    path: "/openapi.json",
    tag: "system",
    auth: false,
    summary: "This OpenAPI 3.1 document",
    answers: { 200: json("The document.", z.looseObject({ openapi: z.literal("3.1.0") })) },
    errors: [],
  },

  // A2A (docs/a2a.md)
  ...a2aOperations(),
  // MCP (docs/mcp-server.md)
  ...mcpOperations(BODY),
  // Trace export (docs/observability.md, Export)
  ...telemetryOperations([...BODY, "ENDPOINT_NOT_ALLOWED", ...SECRETS]),

  // Agents
  {
    method: "put",
    path: "/v1/agents/{name}",
    tag: "agents",
    summary: "Create or replace an agent",
    description:
      "JSON, or a Markdown file with YAML front matter (`Content-Type: text/markdown`). The name in the body must equal the one in the path. Audited as `agent.created` or `agent.updated` (with the top-level fields it changed, by name); a refused write is not. A `PATTERN_BUDGET_EXCEEDED` refusal's details give the agent's charge (`agent_instructions`), the tenant's with it (`tenant_instructions`) and the `limit`, all in ASCII literal steps, and the agent's costliest `pattern` with its `charge`, its `instructions` and the instruction kinds that make it `costly` (`unicode_class`, `class`, `branch`, `jump`, `assertion`).",
    params: AgentParam,
    body: AgentDefinition,
    bodyMedia: "text/markdown",
    answers: { 200: json("Replaced.", StoredAgent), 201: json("Created.", StoredAgent) },
    errors: [
      ...BODY,
      "INVALID_AGENT_FILE",
      "INVALID_PATTERN",
      "INVALID_EXPRESSION",
      "INVALID_CONDITION",
      "ENDPOINT_NOT_ALLOWED",
      "PATTERN_BUDGET_EXCEEDED",
      ...SECRETS,
    ],
  },
  {
    method: "get",
    path: "/v1/agents",
    tag: "agents",
    summary: "List agents in name order",
    query: AgentListQuery,
    answers: { 200: json("A page of agents.", Page(StoredAgent)) },
    errors: LIST,
  },
  {
    method: "get",
    path: "/v1/agents/{name}",
    tag: "agents",
    summary: "One agent",
    params: AgentParam,
    answers: { 200: json("The agent.", StoredAgent) },
    errors: ["VALIDATION_FAILED", "AGENT_NOT_FOUND"],
  },
  {
    method: "delete",
    path: "/v1/agents/{name}",
    tag: "agents",
    summary: "Delete an agent",
    description: "Audited as `agent.deleted`.",
    params: AgentParam,
    answers: { 204: noContent },
    errors: ["VALIDATION_FAILED", "AGENT_NOT_FOUND"],
  },
  {
    method: "get",
    path: "/v1/agents/{name}/blocking",
    tag: "agents",
    summary: "What the agent waits for",
    description: "`none`, or `internal` (a query to another agent) or `user` (an escalation to a person).",
    params: AgentParam,
    answers: { 200: json("Its blocking status.", BlockingStatus) },
    errors: ["VALIDATION_FAILED", "AGENT_NOT_FOUND"],
  },
  {
    method: "get",
    path: "/v1/agents/{name}/load",
    tag: "agents",
    summary: "The agent's capacity and leases",
    description:
      "For an agent with `max_concurrent_sessions`: paused or not, the capacity, and each session's lease (tentative until its handoff committed). A hot agent's capacity is split over shard objects; this is their sum.",
    params: AgentParam,
    answers: { 200: json("Its load.", AgentLoad) },
    errors: ["VALIDATION_FAILED", "AGENT_NOT_FOUND", "DEPENDENCY_UNAVAILABLE"],
  },
  {
    method: "get",
    path: "/v1/agents/{name}/handoffs",
    tag: "agents",
    summary: "Handoffs to or from the agent, newest first",
    params: AgentParam,
    query: PageQuery,
    answers: { 200: json("A page of handoffs.", Page(HandoffIndexRow)) },
    errors: LIST,
  },

  // Tools
  {
    method: "put",
    path: "/v1/tools/{name}",
    tag: "tools",
    summary: "Create or replace a tool",
    params: ToolParam,
    body: ToolDefinition,
    answers: { 200: json("Replaced.", StoredTool), 201: json("Created.", StoredTool) },
    errors: [...BODY, "ENDPOINT_NOT_ALLOWED", ...SECRETS],
  },
  {
    method: "get",
    path: "/v1/tools",
    tag: "tools",
    summary: "List tools in name order",
    query: ToolListQuery,
    answers: { 200: json("A page of tools.", Page(StoredTool)) },
    errors: LIST,
  },
  {
    method: "get",
    path: "/v1/tools/{name}",
    tag: "tools",
    summary: "One tool",
    params: ToolParam,
    answers: { 200: json("The tool.", StoredTool) },
    errors: ["VALIDATION_FAILED", "TOOL_NOT_FOUND"],
  },
  {
    method: "post",
    path: "/v1/tools/{name}/refresh",
    tag: "tools",
    summary: "List an MCP tool server's tools now",
    description:
      "Lists the server's tools (Streamable HTTP, docs/mcp.md) and moves the registry version, so every run lists them again. The names are what `tools.allow` may name and a model calls.",
    params: ToolParam,
    answers: { 200: json("The tools agents are offered.", McpToolListing) },
    errors: ["VALIDATION_FAILED", "TOOL_NOT_FOUND", "MCP_ERROR", ...SECRETS],
  },
  {
    method: "delete",
    path: "/v1/tools/{name}",
    tag: "tools",
    summary: "Delete a tool",
    params: ToolParam,
    answers: { 204: noContent },
    errors: ["VALIDATION_FAILED", "TOOL_NOT_FOUND"],
  },

  // The tenant vault
  ...vaultOperations(BODY, LIST),

  // Routing
  {
    method: "post",
    path: "/v1/route",
    tag: "routing",
    summary: "Dry-run routing: which agent would take this input",
    description: "Changes nothing. The `Server-Timing` header splits the time between the tiers.",
    body: RouteRequest,
    answers: { 200: json("The decision: agent, method, confidence and why.", RouteDecision) },
    errors: [...BODY, "INVALID_CONFIG", "ROUTING_DISABLED", "MODEL_ERROR", "MODEL_TIMEOUT"],
  },
  {
    method: "get",
    path: "/v1/route/stats",
    tag: "routing",
    summary: "The compiled router this isolate holds",
    answers: { 200: json("Registry version, size, compile time and memory.", RouteStats) },
    errors: [],
  },
  ...replayOperations(BODY, LIST),
  {
    method: "get",
    path: "/v1/config/routing",
    tag: "routing",
    summary: "The resolved routing configuration and each value's layer",
    answers: { 200: json("The configuration.", RoutingConfigView) },
    errors: [],
  },
  {
    method: "put",
    path: "/v1/config/routing",
    tag: "routing",
    summary: "Replace the tenant's layer of routing configuration",
    body: RoutingConfigPatch,
    answers: { 200: json("The configuration it resolves to.", RoutingConfigView) },
    errors: [...BODY, "INVALID_CONFIG"],
  },
  {
    method: "delete",
    path: "/v1/config/routing",
    tag: "routing",
    summary: "Clear the tenant's layer",
    answers: { 200: json("The configuration without it.", RoutingConfigView) },
    errors: [],
  },

  // Webhooks out
  {
    method: "get",
    path: "/v1/config/events",
    tag: "webhooks",
    summary: "Where Relay sends the tenant's events",
    answers: { 200: json("The subscription, with the secret that signs deliveries.", EventSubscription) },
    errors: ["NOT_FOUND"],
  },
  {
    method: "put",
    path: "/v1/config/events",
    tag: "webhooks",
    summary: "Set the events URL (Relay makes the signing secret)",
    body: EventSubscriptionInput,
    answers: { 200: json("Replaced.", EventSubscription), 201: json("Created.", EventSubscription) },
    errors: [...BODY, "ENDPOINT_NOT_ALLOWED"],
  },
  {
    method: "delete",
    path: "/v1/config/events",
    tag: "webhooks",
    summary: "Stop sending events",
    answers: { 204: noContent },
    errors: ["NOT_FOUND"],
  },
  {
    method: "get",
    path: "/v1/config",
    tag: "webhooks",
    summary: "What this deployment lets Relay call",
    description:
      "The outbound address policy's settings: whether local endpoints (`http:` and loopback, for this machine named by a loopback address or `localhost`) are allowed, and Relay's own hosts, which it never calls.",
    answers: { 200: json("The settings.", ConfigView) },
    errors: [],
  },
  {
    method: "get",
    path: "/v1/config/signing-secret",
    tag: "webhooks",
    summary: "The secret Relay signs deliveries to your webhook agents and http tools with",
    description:
      "Standard Webhooks. Made by Relay on first use. Signs deliveries to the tenant's webhook agents, http tools and signed A2A agents unless a definition names its own `signing_secret` from the vault, or says `signing: none`.",
    answers: { 200: json("The secret, and the one a rotation replaced while it still signs.", SigningSecret) },
    errors: [],
  },
  {
    method: "post",
    path: "/v1/config/signing-secret/rotate",
    tag: "webhooks",
    summary: "Replace the signing secret",
    description:
      "The replaced secret keeps signing beside the new one for `grace_s` (default one day), so receivers can switch without missing a delivery; `grace_s: 0` stops it at once.",
    body: SigningSecretRotate,
    bodyOptional: true,
    answers: { 200: json("The new secret, and the replaced one while it still signs.", SigningSecret) },
    errors: BODY,
  },
  {
    method: "post",
    path: "/v1/webhooks/{source}",
    tag: "webhooks",
    auth: false,
    summary: "A signed delivery from another system",
    description:
      "Standard Webhooks: signed with the source's secret (`WEBHOOK_SECRET_<SOURCE>`), acting for its tenant. A retried `webhook-id` gets the first answer again. A delivery refused before its signature verifies is counted (`GET /v1/webhooks/stats`), not audited one by one: at most one `webhook.rejected` sample per source per minute.",
    params: { source: z.string() },
    headers: {
      "webhook-id": { schema: z.string(), required: true, description: "The delivery's id: retries repeat it." },
      "webhook-timestamp": {
        schema: z.string(),
        required: true,
        description: "Unix seconds; refused when more than 5 minutes off.",
      },
      "webhook-signature": {
        schema: z.string(),
        required: true,
        description: "`v1,<base64 HMAC-SHA256>`, space-separated when several.",
      },
    },
    body: WebhookPayload,
    answers: { 200: json("Handled.", WebhookAnswer), 202: json("Accepted; it continues.", WebhookAnswer) },
    errors: [
      "WEBHOOK_REJECTED",
      "WEBHOOK_SOURCE_NOT_FOUND",
      "HANDOFF_IN_PROGRESS",
      ...BODY,
      ...SESSION,
      ...HANDOFF,
      ...RUN,
      "TRIGGER_NOT_FOUND",
      "INTERNAL",
    ],
  },
  {
    method: "get",
    path: "/v1/webhooks/stats",
    tag: "webhooks",
    summary: "Deliveries refused before they authenticated, per source",
    description:
      "Counts per source and reason (unknown source, too large, unsigned, badly signed, stale…), as the Worker's isolates flush them: about a second behind. Each source has at most one `webhook.rejected` audit record per minute, a sample; these counts are the whole story.",
    answers: { 200: json("Counts per source.", WebhookStats) },
    errors: [],
  },

  // Sessions
  {
    method: "post",
    path: "/v1/sessions",
    tag: "sessions",
    summary: "Start a session",
    description: "With no agent named, the router picks one from `input` and the decision comes back as `route`.",
    body: SessionCreate,
    answers: { 201: json("The session.", SessionView.extend({ route: RouteDecision.optional() })) },
    errors: [
      ...BODY,
      "AGENT_NOT_FOUND",
      "AGENT_UNAVAILABLE",
      "NO_ROUTE",
      "ROUTING_DISABLED",
      "MODEL_ERROR",
      "MODEL_TIMEOUT",
    ],
  },
  {
    method: "get",
    path: "/v1/sessions",
    tag: "sessions",
    summary: "The tenant's sessions, newest first (eventually consistent)",
    query: SessionListQuery,
    answers: { 200: json("A page of sessions.", Page(SessionIndexRow)) },
    errors: LIST,
  },
  {
    method: "get",
    path: "/v1/sessions/{id}",
    tag: "sessions",
    summary: "One session",
    params: SessionParam,
    answers: { 200: json("The session.", SessionView) },
    errors: SESSION,
  },
  {
    method: "delete",
    path: "/v1/sessions/{id}",
    tag: "sessions",
    summary: "Delete a session (its audit reaches D1 first)",
    params: SessionParam,
    answers: { 204: noContent },
    errors: [...SESSION, "HANDOFF_IN_PROGRESS", "RUN_IN_PROGRESS"],
  },
  {
    method: "get",
    path: "/v1/sessions/{id}/messages",
    tag: "sessions",
    summary: "The conversation, in order",
    params: SessionParam,
    query: HistoryQuery,
    answers: {
      200: json("A page of history items, each with its tokens (null: not counted yet).", Page(StoredHistoryItem)),
    },
    errors: [...LIST, ...SESSION],
  },
  {
    method: "get",
    path: "/v1/sessions/{id}/compactions",
    tag: "sessions",
    summary: "The compactions of the session's views, oldest first",
    description:
      "What stands in each agent's view for the older conversation it covers (docs/memory.md). The history itself stays whole.",
    params: SessionParam,
    answers: { 200: json("The compactions.", CompactionList) },
    errors: [...SESSION],
  },
  {
    method: "post",
    path: "/v1/sessions/{id}/messages",
    tag: "sessions",
    summary: "Send a message: a user message runs the current agent's turn",
    description:
      "200 when the run has ended or paused, 202 while it still runs (poll the run). `Accept: text/event-stream` streams the run's events instead. `run: false`, or another role, only stores the message (201).",
    params: SessionParam,
    body: SessionMessage,
    answers: {
      200: {
        ...json("The message and its run, ended or paused.", MessageRun),
        stream: "The run's live events as they happen, then `event: result` with the JSON answer.",
        frames: z.union([LiveEvent, LiveDelta, MessageRun]),
      },
      201: json("The message, stored without a run.", AddedMessage),
      202: json("The message and its run, still running.", MessageRun),
    },
    errors: [...BODY, ...SESSION, ...RUN, "HANDOFF_IN_PROGRESS", "MAX_TURNS_EXCEEDED"],
  },
  {
    method: "post",
    path: "/v1/sessions/{id}/tool-outputs",
    tag: "sessions",
    summary: "Outputs of the client tools a run waits for",
    params: SessionParam,
    body: ToolOutputs,
    answers: {
      200: json("The resumed run, ended or paused.", RunOnly),
      202: json("The resumed run, still running.", RunOnly),
    },
    errors: [...BODY, ...SESSION, "TOOL_OUTPUTS_MISMATCH", "RUN_NOT_AWAITING_OUTPUTS", "RUN_NOT_FOUND", ...RUN],
  },
  {
    method: "get",
    path: "/v1/sessions/{id}/runs/{run_id}",
    tag: "sessions",
    summary: "One run",
    params: { ...SessionParam, run_id: z.string() },
    answers: { 200: json("The run.", Run) },
    errors: [...SESSION, "RUN_NOT_FOUND"],
  },
  {
    method: "post",
    path: "/v1/sessions/{id}/runs/{run_id}/cancel",
    tag: "sessions",
    summary: "Cancel a run",
    description:
      "Stops an active run: a model call under way is aborted, what it had written is kept in the conversation marked `cut`, open inbox items of the run are cancelled, and the run ends `cancelled` (error RUN_CANCELLED). A run that has ended is RUN_NOT_CANCELLABLE.",
    params: { ...SessionParam, run_id: z.string() },
    answers: { 200: json("The run, cancelled.", Run) },
    errors: [...SESSION, "RUN_NOT_FOUND", "RUN_NOT_CANCELLABLE"],
  },
  {
    method: "get",
    path: "/v1/sessions/{id}/trace",
    tag: "sessions",
    summary: "The session's trace events, oldest first",
    params: SessionParam,
    query: TraceQuery,
    answers: { 200: json("A page of trace events.", Page(TraceEvent)) },
    errors: [...LIST, ...SESSION],
  },
  {
    method: "get",
    path: "/v1/sessions/{id}/ws",
    tag: "sessions",
    summary: "The session's live events over a WebSocket",
    description:
      "An upgrade. Browsers authenticate with the subprotocols `relay.v1` and `bearer.<key>`. `after` replays the events after that id first.",
    params: SessionParam,
    query: z.strictObject({
      after: z.string().regex(EVENT_ID).optional(),
    }),
    answers: {
      101: {
        description:
          'Switching protocols: one JSON text frame per live event, a [LiveEvent](#/components/schemas/LiveEvent) or a [LiveDelta](#/components/schemas/LiveDelta), after a first `{ "type": "subscribed", "after": <id or null> }`.',
      },
    },
    errors: ["VALIDATION_FAILED", "INVALID_CURSOR", ...SESSION],
  },
  {
    method: "patch",
    path: "/v1/sessions/{id}/state",
    tag: "sessions",
    summary: "Set and unset the session's state variables",
    params: SessionParam,
    body: SessionStatePatch,
    answers: { 200: json("The session.", SessionView) },
    errors: [...BODY, ...SESSION],
  },
  {
    method: "post",
    path: "/v1/sessions/{id}/agent-status",
    tag: "sessions",
    summary: "An agent reports busy or idle (graceful handoffs wait for idle)",
    params: SessionParam,
    body: AgentStatusUpdate,
    answers: { 200: json("The session.", SessionView) },
    errors: [...BODY, ...SESSION],
  },
  {
    method: "post",
    path: "/v1/sessions/{id}/events",
    tag: "sessions",
    summary: "A session event for event triggers",
    params: SessionParam,
    body: SessionEvent,
    answers: {
      200: json("The handoff it started, or null.", EventFired),
      202: json("Queued while the session is busy.", EventFired),
    },
    errors: [...BODY, ...SESSION, ...HANDOFF, ...RUN],
  },
  {
    method: "post",
    path: "/v1/sessions/{id}/triggers",
    tag: "sessions",
    summary: "Fire the current agent's explicit trigger for a target",
    params: SessionParam,
    body: TriggerFire,
    answers: { 200: json("The handoff it started.", Handoff) },
    errors: [...BODY, ...SESSION, ...HANDOFF, ...RUN, "TRIGGER_NOT_FOUND"],
  },
  {
    method: "post",
    path: "/v1/sessions/{id}/fan-out",
    tag: "sessions",
    summary: "The current agent (a supervisor) fans work out to its agents",
    params: SessionParam,
    body: FanoutStart,
    answers: { 200: json("Ended: completed or failed.", Fanout), 202: json("Still executing.", Fanout) },
    errors: [
      ...BODY,
      ...SESSION,
      ...RUN,
      "AGENT_NOT_FOUND",
      "HANDOFF_NOT_ALLOWED",
      "NO_ROUTE",
      "MODEL_ERROR",
      "MODEL_TIMEOUT",
    ],
  },
  {
    method: "get",
    path: "/v1/sessions/{id}/fan-outs/{fanout_id}",
    tag: "sessions",
    summary: "One fan-out",
    params: { ...SessionParam, fanout_id: z.string() },
    answers: { 200: json("The fan-out.", Fanout) },
    errors: [...SESSION, "NOT_FOUND"],
  },
  {
    method: "get",
    path: "/v1/sessions/{id}/audit",
    tag: "sessions",
    summary: "The session's audit trail, read-your-writes",
    params: SessionParam,
    query: SessionAuditQuery,
    answers: { 200: json("A page of records; `pending` are not in D1 yet.", SessionAuditPage) },
    errors: [...LIST, ...SESSION],
  },
  ...memoryOperations(BODY, SESSION),
  {
    method: "get",
    path: "/v1/sessions/{id}/inbox",
    tag: "inbox",
    summary: "This session's inbox items, live",
    params: SessionParam,
    query: PageQuery,
    answers: { 200: json("A page of items.", Page(InboxItem)) },
    errors: [...LIST, ...SESSION],
  },

  // Handoffs
  {
    method: "post",
    path: "/v1/handoffs",
    tag: "handoffs",
    summary: "Start a handoff",
    body: HandoffRequest,
    headers: {
      "Idempotency-Key": {
        schema: z.string().max(200),
        description: "Repeating a request with the same key answers the same handoff.",
      },
    },
    answers: {
      200: json("Final: completed, or refused and rolled back.", Handoff),
      202: json("Pending: waiting for the source.", Handoff),
    },
    errors: [...BODY, ...SESSION, ...HANDOFF],
  },
  {
    method: "get",
    path: "/v1/handoffs/{id}",
    tag: "handoffs",
    summary: "One handoff",
    params: Id("The handoff's id (hof_…)."),
    answers: { 200: json("The handoff.", Handoff) },
    errors: ["HANDOFF_NOT_FOUND", "SESSION_EXPIRED"],
  },
  {
    method: "post",
    path: "/v1/handoffs/{id}/cancel",
    tag: "handoffs",
    summary: "Cancel a pending handoff",
    params: Id("The handoff's id (hof_…)."),
    answers: { 200: json("The handoff, cancelled.", Handoff) },
    errors: ["HANDOFF_NOT_FOUND", "HANDOFF_NOT_CANCELLABLE", "SESSION_EXPIRED"],
  },

  // Inbox
  {
    method: "get",
    path: "/v1/inbox",
    tag: "inbox",
    summary: "The tenant's inbox, oldest first (eventually consistent)",
    query: InboxListQuery,
    answers: { 200: json("A page of items.", Page(InboxIndexRow)) },
    errors: LIST,
  },
  {
    method: "get",
    path: "/v1/inbox/{id}",
    tag: "inbox",
    summary: "One inbox item, live, with its reply",
    params: Id("The item's id (inb_…)."),
    answers: { 200: json("The item.", InboxItem) },
    errors: ["INBOX_ITEM_NOT_FOUND", "SESSION_EXPIRED"],
  },
  {
    method: "post",
    path: "/v1/inbox/{id}/resolve",
    tag: "inbox",
    summary: "Answer a question or decide an approval",
    description:
      "`{ reply }` for a question (a human turn, an escalation); `{ decision: approve | deny, reason? }` for an approval.",
    params: Id("The item's id (inb_…)."),
    body: InboxResolve,
    answers: { 200: json("The item and the run it resumed (null when none).", InboxResolved) },
    errors: [...BODY, "INBOX_ITEM_NOT_FOUND", "INBOX_ITEM_CLOSED", "INBOX_ANSWER_MISMATCH", "SESSION_EXPIRED", ...RUN],
  },

  // Collaborations
  {
    method: "post",
    path: "/v1/collaborations",
    tag: "collaborations",
    summary: "Start a collaboration",
    body: CollaborationCreate,
    answers: { 201: json("The collaboration.", Collaboration) },
    errors: [...BODY, "AGENT_NOT_FOUND"],
  },
  {
    method: "get",
    path: "/v1/collaborations/{id}",
    tag: "collaborations",
    summary: "A collaboration with its message log",
    params: CollaborationParam,
    answers: { 200: json("The collaboration.", Collaboration) },
    errors: ["COLLABORATION_NOT_FOUND"],
  },
  {
    method: "post",
    path: "/v1/collaborations/{id}/messages",
    tag: "collaborations",
    summary: "Send a message",
    params: CollaborationParam,
    body: CollabMessageInput,
    answers: { 201: json("The message; a capability broadcast's ranking in `matches`.", SentMessage) },
    errors: [...BODY, "COLLABORATION_NOT_FOUND", "INVALID_TRANSITION", "NOT_FOUND"],
  },
  {
    method: "post",
    path: "/v1/collaborations/{id}/messages/{message_id}/resolve",
    tag: "collaborations",
    summary: "A person answers an escalation",
    params: { ...CollaborationParam, message_id: z.string() },
    body: EscalationResolve,
    answers: { 200: json("The escalation, answered.", CollabMessage) },
    errors: [...BODY, "COLLABORATION_NOT_FOUND", "NOT_FOUND", "INVALID_TRANSITION", "INBOX_ITEM_CLOSED"],
  },
  {
    method: "post",
    path: "/v1/collaborations/{id}/complete",
    tag: "collaborations",
    summary: "End a collaboration with its outcome",
    params: CollaborationParam,
    body: CollaborationComplete,
    answers: { 200: json("The collaboration.", Collaboration) },
    errors: [...BODY, "COLLABORATION_NOT_FOUND", "INVALID_TRANSITION"],
  },
  {
    method: "get",
    path: "/v1/capabilities/match",
    tag: "collaborations",
    summary: "Agents ranked by the capability matcher",
    query: CapabilityMatchQuery,
    answers: { 200: json("A page of matches, best first.", CapabilityMatchPage) },
    errors: LIST,
  },

  // Audit
  // Usage
  {
    method: "get",
    path: "/v1/usage",
    tag: "usage",
    summary: "What the tenant used, by hour or UTC day, and its quotas now",
    description:
      "Requests, sessions, runs, handoffs, tool calls, model calls and tokens (by provider and model), D1 rows and bytes, refusals by limit; each bucket of the period, empty ones included. Counted in memory and in the tenant's object, so it follows use by about a second.",
    query: UsageQuery,
    answers: { 200: json("The report.", UsageReport) },
    errors: ["VALIDATION_FAILED"],
  },
  ...operatorOperations(),
  {
    method: "get",
    path: "/v1/audit",
    tag: "audit",
    summary: "The tenant's audit log, newest first",
    description:
      "Filter by `session_id`, `agent`, `action` and `since` (an ISO time). Records older than the deployment's `AUDIT_RETENTION_DAYS` leave this log for an R2 archive, one NDJSON object per tenant per day: `archive` says through which day and where (null while nothing has left).",
    query: AuditQuery,
    answers: { 200: json("A page of records, and where older ones are.", AuditPage) },
    errors: LIST,
  },
];

/** The operator key's errors: missing, wrong, or not configured (no tenant quota applies). */
const OPERATOR_AUTH: ErrorCode[] = ["UNAUTHORIZED", "AUTH_NOT_CONFIGURED", "DEPENDENCY_UNAVAILABLE", "INTERNAL"];

/** The auth errors every keyed route may answer with, added to each operation's own. */
export function errorsOf(operation: Operation): ErrorCode[] {
  const auth = operation.auth === false ? [] : operation.auth === "operator" ? OPERATOR_AUTH : AUTH;
  return [...new Set([...auth, ...operation.errors])];
}

/** The A2A routes: a card and a JSON-RPC endpoint for the front door and for each agent. */
function a2aOperations(): Operation[] {
  const card = (path: string, params: Record<string, z.ZodType> | undefined, who: string): Operation => ({
    method: "get",
    path,
    tag: "a2a",
    auth: false,
    summary: `The A2A agent card of ${who}`,
    description:
      "With the tenant's key (Authorization: Bearer), the full card; without one, the same card at every address, saying only how to authenticate.",
    ...(params ? { params } : {}),
    answers: { 200: json("The agent card (A2A 1.0).", A2aAgentCard) },
    errors: ["UNAUTHORIZED", "VALIDATION_FAILED", "AGENT_NOT_FOUND", "AGENT_UNAVAILABLE", "DEPENDENCY_UNAVAILABLE"],
  });
  const endpoint = (path: string, params: Record<string, z.ZodType> | undefined, who: string): Operation => ({
    method: "post",
    path,
    tag: "a2a",
    summary: `A2A JSON-RPC endpoint of ${who}`,
    description:
      "A2A 1.0 methods over JSON-RPC 2.0; send `A2A-Version: 1.0`. Protocol errors are JSON-RPC errors with A2A's codes in a 200; SendStreamingMessage and SubscribeToTask answer with Server-Sent Events. A2A's own media type, `application/a2a+json`, is taken as JSON, and answered in when the client accepts it.",
    ...(params ? { params } : {}),
    body: JsonRpcRequest,
    bodyAlsoAs: "application/a2a+json",
    answers: {
      200: {
        description: "The JSON-RPC answer.",
        schema: JsonRpcResponse,
        alsoAs: "application/a2a+json",
        stream:
          "For SendStreamingMessage and SubscribeToTask: one JSON-RPC answer per event (a StreamResponse), each stored event with its `id:`.",
      },
    },
    errors: ["PAYLOAD_TOO_LARGE", "VALIDATION_FAILED", "AGENT_NOT_FOUND", "AGENT_UNAVAILABLE"],
  });
  const agent = { agent: AgentName };
  return [
    card("/.well-known/agent-card.json", undefined, "the tenant's front door, at the origin's well-known address"),
    card("/a2a/.well-known/agent-card.json", undefined, "the tenant's front door"),
    endpoint("/a2a", undefined, "the tenant's front door (routes each new conversation)"),
    card("/a2a/{agent}/.well-known/agent-card.json", agent, "one agent"),
    endpoint("/a2a/{agent}", agent, "one agent"),
  ];
}
