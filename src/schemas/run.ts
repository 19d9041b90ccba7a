import * as z from "zod";
import { AgentName } from "./agent";
import { StoredError } from "./handoff";
import { ApprovalDecision } from "./inbox";

/**
 * Runs (docs/runs.md): a user message to a session starts a run — the current agent's turn,
 * repeated while the model calls tools, continued by the target after a handoff — until a
 * final output, a pause, or `max_turns`. The run and its trace live in the session's
 * Durable Object.
 */

export const RUN_STATUSES = [
  "running",
  "completed",
  "failed",
  "awaiting_human",
  "awaiting_approval",
  "requires_action",
  "cancelled",
] as const;
export const RunStatus = z.enum(RUN_STATUSES);
export type RunStatus = z.infer<typeof RunStatus>;

/** The statuses a run waits in, for a person or the client. */
export const PAUSED_RUN_STATUSES = [
  "awaiting_human",
  "awaiting_approval",
  "requires_action",
] as const satisfies readonly RunStatus[];

export const DEFAULT_MAX_TURNS = 10;

/** Trace event types (docs/runs.md, Traces). */
export const TraceEventType = z.enum([
  "route",
  "llm_call",
  "tool_call",
  "handoff",
  "guardrail",
  "agent_start",
  "agent_complete",
  "agent_error",
  /** The agent's view was compacted before its turn (docs/memory.md). */
  "compaction",
]);
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
  executor: z.enum(["model", "webhook", "human", "a2a"]).optional(),
  outcome: z.string().optional(),
  /** A model call asked to stream: whether its text came in pieces (false: the provider or model answered whole). */
  streamed: z.boolean().optional(),
  /** A model call: why the model stopped, as the provider said (OpenAI's `finish_reason`), one per answer. */
  finish_reasons: z.array(z.string()).optional(),
  /** A model call: the model the provider says answered, when it says (it may name a version of the one asked for). */
  response_model: z.string().optional(),
  /** A streamed model call: milliseconds from the request to the first chunk of its answer. */
  first_chunk_ms: z.number().min(0).optional(),
  /** A remote A2A agent's turn: the method sent, and the remote task as it stood when the call returned. */
  a2a: z
    .object({
      method: z.enum(["SendMessage", "SendStreamingMessage"]),
      task_id: z.string().optional(),
      /** `TASK_STATE_*`, as the A2A protocol names it. */
      task_state: z.string().optional(),
    })
    .optional(),
  /** A route: each tier's time, and whether the LLM tier was asked. */
  route_tiers: z
    .object({
      /** The rule tier's time in µs, as the deciding isolate's clock saw it; absent when it did not run. */
      rule_us: z.number().min(0).optional(),
      /** The LLM tier's call in ms; absent when it was not asked. */
      llm_ms: z.number().min(0).optional(),
      llm_consulted: z.boolean(),
    })
    .optional(),
  /** A compaction: its id and strategy, the items it covers, the view's tokens before and after. */
  compaction: z
    .object({
      id: z.string(),
      strategy: z.enum(["summarize", "trim"]),
      items: z.number(),
      tokens_before: z.number(),
      tokens_after: z.number(),
    })
    .optional(),
  /**
   * The trace context of the request that resumed the run at this step (an approval's decision,
   * a person's answer, the client's tool outputs), when it carried one: its span is linked
   * from the step's span (docs/observability.md, Resumed runs).
   */
  resumed_by: z
    .object({ trace_id: z.string().regex(/^[0-9a-f]{32}$/), span_id: z.string().regex(/^[0-9a-f]{16}$/) })
    .optional(),
});
export type TraceDetails = z.infer<typeof TraceDetails>;

/** What a model or remote agent's answer said of itself, kept on its `llm_call` event. */
export type CallFacts = Pick<TraceDetails, "finish_reasons" | "response_model" | "first_chunk_ms" | "a2a">;

/** One step of a run, in the trace format of docs/runs.md, Traces. Message content is not copied here. */
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

/** A tool call as the model made it: its id, the tool's name, the arguments as JSON text. */
export const PendingCall = z.object({ id: z.string(), name: z.string(), arguments: z.string() });
export type PendingCall = z.infer<typeof PendingCall>;

/** What a paused run waits for. */
export const RunPending = z.discriminatedUnion("kind", [
  /** awaiting_human: a person's answer in the inbox. */
  z.object({
    kind: z.literal("human"),
    inbox_id: z.string(),
    agent: AgentName,
    /** The escalate_to_human call being answered; null when a human agent holds the turn. */
    tool_call_id: z.string().nullable(),
    /** ISO 8601: when the item expires unanswered. */
    expires_at: z.string(),
  }),
  /** awaiting_approval: a person's yes or no on each call (one inbox item each). */
  z.object({
    kind: z.literal("approval"),
    agent: AgentName,
    approvals: z.array(
      z.object({ inbox_id: z.string(), tool_call: PendingCall, decision: ApprovalDecision.nullable() }),
    ),
    /** ISO 8601: when the undecided calls are denied. */
    expires_at: z.string(),
  }),
  /**
   * awaiting_human: a remote A2A agent asked for input (its task is input-required); the
   * session's next user message is sent to that same remote task (docs/a2a.md).
   */
  z.object({
    kind: z.literal("input"),
    agent: AgentName,
    /** The remote agent's task and context that the next message continues. */
    task_id: z.string(),
    context_id: z.string(),
    /** What the remote agent asked, as it asked it (runs paused before it was kept have none). */
    question: z.string().optional(),
    /** ISO 8601: when the run fails with INPUT_TIMEOUT. */
    expires_at: z.string(),
  }),
  /** requires_action: the client runs these calls and posts their outputs to `/v1/sessions/:id/tool-outputs`. */
  z.object({
    kind: z.literal("client_tools"),
    agent: AgentName,
    tool_calls: z.array(PendingCall),
    /** ISO 8601: when the run fails with TOOL_OUTPUTS_TIMEOUT. */
    expires_at: z.string(),
  }),
]);
export type RunPending = z.infer<typeof RunPending>;

export const APPROVAL_STATES = ["none", "pending", "approved", "denied"] as const;

/** What runs a call: an http tool, an MCP server's tool, the client, or Relay's agent-to-agent tools (ask, notify, broadcast, fan_out). */
export const WORK_CALL_KINDS = ["http", "mcp", "client", "ask", "notify", "broadcast", "fan_out"] as const;
export type WorkCallKind = (typeof WORK_CALL_KINDS)[number];

/**
 * Who runs each kind of call. `relay`: Relay makes it, reaching an outside system or another
 * agent, so it may have had effects by the time a restart cuts it off, and is never made
 * again silently (src/runtime/run-recovery.ts). `client`: the API client runs it and posts the
 * output. A new kind must say which it is here before it compiles.
 */
export const CALL_RUNNER = {
  http: "relay",
  mcp: "relay",
  client: "client",
  ask: "relay",
  notify: "relay",
  broadcast: "relay",
  fan_out: "relay",
} as const satisfies Record<WorkCallKind, "relay" | "client">;

/**
 * What is left of one model response's tool calls (stored with the run, so a pause or a
 * restart picks up where it was): the registry tools to run, and the handoff (or
 * escalation) to carry out after them. Calls answered at once (errors) are not here.
 */
export const TurnWork = z.object({
  agent: AgentName,
  calls: z.array(
    PendingCall.extend({
      /** Who runs it: Relay (an http tool, or a message to another agent), or the API client. */
      kind: z.enum(WORK_CALL_KINDS),
      approval: z.enum(APPROVAL_STATES),
      inbox_id: z.string().nullable(),
      /** Its output is in the history. */
      done: z.boolean(),
    }),
  ),
  handoff: PendingCall.extend({
    type: z.enum(["transfer", "return", "escalate"]),
    target: AgentName.nullable(),
    reason: z.string(),
    input: z.unknown().optional(),
    approval: z.enum(APPROVAL_STATES),
    inbox_id: z.string().nullable(),
  }).nullable(),
  /** Handoff calls after the first: kept out of the target's view. */
  hidden_calls: z.array(z.string()),
});
export type TurnWork = z.infer<typeof TurnWork>;
export type WorkCall = TurnWork["calls"][number];
export type WorkHandoff = NonNullable<TurnWork["handoff"]>;

/** A non-fatal finding on a completed run (a guardrail's `warn`). */
export const RunWarning = z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() });
export type RunWarning = z.infer<typeof RunWarning>;

/**
 * The W3C trace a run belongs to (docs/observability.md, Propagation): the trace of the
 * request that started it, else one of its own whose id is derived from the run id. `parent`
 * is the caller's span and what it asked to propagate, kept so that the run's calls after a
 * pause or a restart carry the same trace.
 */
export const RunTrace = z.object({
  trace_id: z.string().regex(/^[0-9a-f]{32}$/),
  parent: z
    .object({
      span_id: z.string().regex(/^[0-9a-f]{16}$/),
      sampled: z.boolean(),
      tracestate: z.array(z.object({ key: z.string(), value: z.string() })),
    })
    .nullable(),
});
export type RunTrace = z.infer<typeof RunTrace>;

/**
 * The A2A request that started a run, for its server span (docs/observability.md, A2A
 * spans): the method, and the id the client gave its message.
 */
export const RunOrigin = z.object({
  a2a_method: z.enum(["SendMessage", "SendStreamingMessage"]),
  message_id: z.string().optional(),
});
export type RunOrigin = z.infer<typeof RunOrigin>;

/** A run as the API returns it. */
export const Run = z.object({
  id: z.string(),
  session_id: z.string(),
  /**
   * The W3C trace id of the run (docs/observability.md, Propagation): the incoming
   * `traceparent`'s, else derived from the run id. Every outbound call of the run carries it.
   */
  trace_id: z.string(),
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
  /** Findings that did not fail the run (a guardrail set to `warn`). */
  warnings: z.array(RunWarning).default([]),
  /** The handoffs the run made, in order. */
  handoffs: z.array(z.string()),
  started_at: z.string(),
  updated_at: z.string(),
  ended_at: z.string().nullable(),
  events: z.array(TraceEvent),
});
export type Run = z.infer<typeof Run>;

/** The most outputs one post may carry (a response's calls are capped alike). */
export const MAX_TOOL_OUTPUTS = 128;

/**
 * `POST /v1/sessions/:id/tool-outputs`: the client's outputs for a run in requires_action,
 * one per pending call. An output is text; any other JSON value is sent to the model as its JSON.
 */
export const ToolOutputs = z.strictObject({
  /** The run the outputs are for (optional: a session has one paused run at most). */
  run_id: z.string().max(200).optional(),
  outputs: z
    .array(
      z.strictObject({
        tool_call_id: z.string().min(1).max(200),
        output: z
          .unknown()
          .refine((v) => v !== undefined, "required")
          .transform((v) => (typeof v === "string" ? v : JSON.stringify(v))),
      }),
    )
    .min(1)
    .max(MAX_TOOL_OUTPUTS),
});
export type ToolOutputs = z.infer<typeof ToolOutputs>;
