import * as z from "zod";
import { ERROR_STATUS, type ErrorCode } from "../errors/codes";
import { HANDOFF_STATUSES } from "../handoff/statuses";
import { AgentName } from "./agent";

/**
 * Handoff schemas (docs/handoffs.md): the API body of `POST /v1/handoffs`, the HandoffContext the
 * target receives, and the stored handoff record with its transitions.
 */

/** `transfer` pushes the target on the session's stack; `return` pops back to the agent that handed over. */
export const HandoffMode = z.enum(["transfer", "return"]);
export type HandoffMode = z.infer<typeof HandoffMode>;

/** immediate interrupts the source; graceful waits for it to be idle; conditional = condition, then graceful. */
export const HandoffPolicy = z.enum(["immediate", "graceful", "conditional"]);
export type HandoffPolicy = z.infer<typeof HandoffPolicy>;

/** The statuses and their meaning live beside the transition table (src/handoff/statuses.ts). */
export const HandoffStatus = z.enum(HANDOFF_STATUSES);
export type HandoffStatus = z.infer<typeof HandoffStatus>;

/** What a graceful handoff becomes when the source is still busy at `timeout_s`. */
export const OnTimeout = z.enum(["fail", "escalate"]);
export type OnTimeout = z.infer<typeof OnTimeout>;

/** 32 KiB, counted in UTF-8 bytes: the cap on one message's text. */
export const MAX_CONTENT_BYTES = 32 * 1024;

const utf8 = new TextEncoder();

/** A string of at most `MAX_CONTENT_BYTES` UTF-8 bytes (zod's `max` counts UTF-16 units, not bytes). */
export const ContentText = z
  .string()
  .refine((s) => s.length <= MAX_CONTENT_BYTES && utf8.encode(s).byteLength <= MAX_CONTENT_BYTES, {
    message: `must be at most ${MAX_CONTENT_BYTES} bytes`,
  });

export const HistoryRole = z.enum(["user", "assistant", "system", "tool"]);
export type HistoryRole = z.infer<typeof HistoryRole>;

export const HistoryItemType = z.enum(["message", "tool_call", "tool_output"]);
export type HistoryItemType = z.infer<typeof HistoryItemType>;

/** A tool call an assistant item makes; `arguments` is the JSON text the model gave. */
export const HistoryToolCall = z.strictObject({
  id: z.string().min(1).max(200),
  name: z.string().min(1).max(100),
  arguments: z.string().max(64 * 1024),
});
export type HistoryToolCall = z.infer<typeof HistoryToolCall>;

/**
 * One conversation item, as the handoff filters see it. A missing `type` means "message".
 * An assistant item with `tool_calls` is a `tool_call` item; each call is answered by a
 * `tool` item (`tool_output`) with its `tool_call_id`.
 */
export const HistoryItem = z.strictObject({
  id: z.string().min(1).max(100).optional(),
  role: HistoryRole,
  agent: AgentName.optional(),
  content: ContentText,
  type: HistoryItemType.optional(),
  tool_name: z.string().min(1).max(100).optional(),
  tool_calls: z.array(HistoryToolCall).max(32).optional(),
  tool_call_id: z.string().min(1).max(200).optional(),
  created_at: z.string().max(40).optional(),
  /** The text stopped before its agent finished it: the run was cancelled, or the model's stream broke. */
  cut: z.literal(true).optional(),
});
export type HistoryItem = z.infer<typeof HistoryItem>;

/** A conversation item as an A2A task shows it: with the id its client gave it, when it was given one. */
export type TaskItem = HistoryItem & { client_message_id?: string };

export const MAX_HISTORY_ITEMS = 1000;

/** Task state travels free-form: a status word ("in_progress") or a structured object. */
export const TaskState = z.union([z.string().max(8000), z.record(z.string(), z.unknown())]);
export type TaskState = z.infer<typeof TaskState>;

export const HandoffTask = z.strictObject({
  task_id: z.string().trim().min(1).max(200),
  task_state: TaskState,
});
export type HandoffTask = z.infer<typeof HandoffTask>;

/** A capability name as `required_capabilities` lists it; matched case-insensitively. */
export const CapabilityName = z.string().trim().min(1).max(100);

/**
 * The body of `POST /v1/handoffs`. For `transfer`, exactly one of `target_agent` and
 * `required_capabilities`. For `return`, neither is needed (the target is the agent that
 * handed over); a `target_agent` that is given must be that agent, and
 * `required_capabilities` is refused.
 */
export const HandoffRequest = z
  .strictObject({
    session_id: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, "must be a session id"),
    source_agent: AgentName,
    target_agent: AgentName.optional(),
    required_capabilities: z.array(CapabilityName).min(1).max(20).optional(),
    mode: HandoffMode.default("transfer"),
    policy: HandoffPolicy.default("immediate"),
    reason: z.string().trim().min(1).max(2000),
    summary: z.string().max(8000).optional(),
    context: z.record(z.string(), z.unknown()).optional(),
    payload: z.record(z.string(), z.unknown()).optional(),
    task: HandoffTask.optional(),
    conversation_history: z.array(HistoryItem).max(MAX_HISTORY_ITEMS).optional(),
    condition: z.string().min(1).max(2000).optional(),
    timeout_s: z.number().int().min(1).max(86_400).default(300),
    on_timeout: OnTimeout.default("fail"),
  })
  .superRefine((req, ctx) => {
    const named = req.target_agent !== undefined;
    const byCapability = req.required_capabilities !== undefined;
    if (req.mode === "transfer" && named === byCapability) {
      ctx.addIssue({
        code: "custom",
        path: named ? ["required_capabilities"] : ["target_agent"],
        message: "a transfer needs exactly one of target_agent and required_capabilities",
      });
    }
    if (req.mode === "return" && byCapability) {
      ctx.addIssue({
        code: "custom",
        path: ["required_capabilities"],
        message: "a return goes back to the agent that handed over; required_capabilities does not apply",
      });
    }
  });
export type HandoffRequest = z.infer<typeof HandoffRequest>;
export type HandoffRequestInput = z.input<typeof HandoffRequest>;

/** The metadata every HandoffContext carries. */
export const HandoffMetadata = z.strictObject({
  /** ISO 8601 time the context was built. */
  timestamp: z.string(),
  /** The session's handoff stack after this handoff, root first, the new current agent last. */
  handoff_chain: z.array(AgentName),
  /** Handoffs deep after this one: `handoff_chain.length − 1`. */
  chain_depth: z.number().int().min(0),
  correlation_id: z.string(),
  handoff_id: z.string(),
  /** Relay addition: transfer or return, so the preamble can say which. */
  mode: HandoffMode,
  /** Relay addition: the history filters in effect (e.g. "max_history:10", "redact_pii"); empty when none. */
  history_filters: z.array(z.string()),
  /** Relay addition: how many items the session's history had at the switch; later items are the target's own. */
  history_length: z.number().int().min(0).optional(),
});
export type HandoffMetadata = z.infer<typeof HandoffMetadata>;

/** What the target agent receives (docs/handoffs.md); stored with the handoff and shown in the session view. */
export const HandoffContext = z.strictObject({
  from_agent: AgentName,
  to_agent: AgentName,
  reason: z.string(),
  summary: z.string().nullable(),
  context: z.record(z.string(), z.unknown()),
  payload: z.record(z.string(), z.unknown()),
  task: HandoffTask.nullable(),
  /** After the handoff's filters (include_context, remove_tool_items, max_history, redact_pii). */
  conversation_history: z.array(HistoryItem),
  metadata: HandoffMetadata,
});
export type HandoffContext = z.infer<typeof HandoffContext>;

const ERROR_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

/** An error as stored on a failed handoff: the same shape as the API's error body. */
export const StoredError = z.strictObject({
  code: z.enum(ERROR_CODES),
  message: z.string(),
  details: z.unknown().optional(),
});
export type StoredError = z.infer<typeof StoredError>;

/** One step of a handoff's life; the first has `from: null` (creation). */
export const HandoffTransition = z.strictObject({
  from: HandoffStatus.nullable(),
  to: HandoffStatus,
  /** ISO 8601. */
  at: z.string(),
  reason: z.string().optional(),
});
export type HandoffTransition = z.infer<typeof HandoffTransition>;

/** A handoff as the SessionDO stores it and `GET /v1/handoffs/:id` returns it. */
export const Handoff = z.strictObject({
  id: z.string(),
  session_id: z.string(),
  status: HandoffStatus,
  mode: HandoffMode,
  policy: HandoffPolicy,
  source: AgentName,
  /** Null until chosen (required_capabilities, or a return whose stack is not read yet). */
  target: AgentName.nullable(),
  request: HandoffRequest,
  context: HandoffContext.nullable(),
  error: StoredError.optional(),
  idempotency_key: z.string().max(200).optional(),
  /** ISO 8601 time a pending handoff times out; set while it waits. */
  deadline_at: z.string().optional(),
  created_at: z.string(),
  updated_at: z.string(),
  transitions: z.array(HandoffTransition),
});
export type Handoff = z.infer<typeof Handoff>;

/** One handoff as `GET /v1/agents/:name/handoffs` lists it (the D1 handoff index). */
export const HandoffIndexRow = z.strictObject({
  id: z.string(),
  session_id: z.string(),
  source_agent: z.string(),
  target_agent: z.string().nullable(),
  status: HandoffStatus,
  mode: HandoffMode,
  policy: HandoffPolicy,
  reason: z.string(),
  created_at: z.string(),
  completed_at: z.string().nullable(),
});
export type HandoffIndexRow = z.infer<typeof HandoffIndexRow>;
