import * as z from "zod";
import { AgentName } from "./agent";

/**
 * Agents talking to each other (docs/collaboration.md): the message types of a collaboration,
 * its phases, an agent's blocking status, and the supervisor's fan-out data
 * model. The pure rules over them are in src/collaboration.
 */

/** Every message type of a collaboration, one union (docs/collaboration.md, Collaborations). */
export const MESSAGE_TYPES = [
  "request",
  "response",
  "broadcast",
  "negotiate",
  "acknowledge",
  "reject",
  "cancel",
  "query",
  "notify",
  "escalate",
] as const;
export const MessageType = z.enum(MESSAGE_TYPES);
export type MessageType = z.infer<typeof MessageType>;

export const PRIORITIES = ["low", "normal", "high", "urgent"] as const;
export const Priority = z.enum(PRIORITIES);
export type Priority = z.infer<typeof Priority>;

/** Types that answer an earlier message, named by `correlation_id`. */
export const REPLY_TYPES: readonly MessageType[] = ["response", "acknowledge", "reject"];

export const CollabMessageInput = z
  .strictObject({
    type: MessageType,
    from: AgentName,
    /** Absent: every participant (a broadcast). */
    to: AgentName.optional(),
    subject: z.string().trim().min(1).max(200).optional(),
    payload: z.record(z.string(), z.unknown()).default({}),
    priority: Priority.default("normal"),
    correlation_id: z.string().min(1).max(200).optional(),
    /** Dropped (and recorded) if still undelivered this long after it was sent. */
    ttl_s: z
      .number()
      .int()
      .min(1)
      .max(7 * 86_400)
      .optional(),
    /** A query's deadline for its response (default 30 s). */
    timeout_s: z.number().int().min(1).max(86_400).optional(),
  })
  .superRefine((m, ctx) => {
    if (REPLY_TYPES.includes(m.type) && m.correlation_id === undefined)
      ctx.addIssue({ code: "custom", path: ["correlation_id"], message: `a ${m.type} names the message it answers` });
    if ((m.type === "query" || m.type === "request") && m.to === undefined)
      ctx.addIssue({ code: "custom", path: ["to"], message: `a ${m.type} is to one agent` });
    if (m.type === "broadcast" && m.to !== undefined)
      ctx.addIssue({ code: "custom", path: ["to"], message: "a broadcast is to every participant" });
    if (m.to !== undefined && m.to === m.from)
      ctx.addIssue({ code: "custom", path: ["to"], message: "an agent does not message itself" });
    if (m.timeout_s !== undefined && m.type !== "query" && m.type !== "escalate")
      ctx.addIssue({
        code: "custom",
        path: ["timeout_s"],
        message: "only a query or an escalation waits for an answer",
      });
  });
export type CollabMessageInput = z.infer<typeof CollabMessageInput>;

export const MESSAGE_STATUSES = ["sent", "answered", "expired", "timed_out", "cancelled"] as const;

export const CollabMessage = z.object({
  id: z.string(),
  collaboration_id: z.string(),
  seq: z.number().int().min(1),
  type: MessageType,
  from: AgentName,
  to: AgentName.nullable(),
  subject: z.string().nullable(),
  payload: z.record(z.string(), z.unknown()),
  priority: Priority,
  correlation_id: z.string().nullable(),
  status: z.enum(MESSAGE_STATUSES),
  sent_at: z.string(),
  /** ISO 8601: when it is dropped unanswered (ttl_s), or a query times out (timeout_s). */
  expires_at: z.string().nullable(),
  /**
   * A query's answer: the response's id, or why there is none (QUERY_TIMEOUT, DEADLOCK_RESOLVED,
   * HUMAN_TIMEOUT, cancelled).
   */
  answered_by: z.string().nullable(),
  error: z.string().nullable(),
  /** An escalation's answer from a person, and who gave it. */
  reply: z.string().nullable().default(null),
  resolved_by: z.string().nullable().default(null),
});
export type CollabMessage = z.infer<typeof CollabMessage>;

/** A collaboration's phases (docs/collaboration.md, Phases), in order. */
export const COLLAB_PHASES = ["discovery", "negotiation", "agreement", "execution", "completion"] as const;
export const CollabPhase = z.enum(COLLAB_PHASES);
export type CollabPhase = z.infer<typeof CollabPhase>;

/** `POST /v1/collaborations`. */
export const CollaborationCreate = z.strictObject({
  initiator: AgentName,
  participants: z.array(AgentName).min(1).max(50),
  context: z.record(z.string(), z.unknown()).default({}),
});
export type CollaborationCreate = z.infer<typeof CollaborationCreate>;

/** `POST /v1/collaborations/:id/messages/:message_id/resolve`: a person answers an escalation. */
export const EscalationResolve = z.strictObject({
  reply: z
    .string()
    .trim()
    .min(1)
    .max(32 * 1024),
  by: z.string().trim().min(1).max(200).optional(),
});
export type EscalationResolve = z.infer<typeof EscalationResolve>;

/** An escalation waits this long for a person unless it says otherwise. */
export const DEFAULT_ESCALATION_TIMEOUT_S = 86_400;

/** `POST /v1/collaborations/:id/complete`. */
export const CollaborationComplete = z.strictObject({
  outcome: z.enum(["succeeded", "failed", "cancelled"]),
  result: z.unknown().optional(),
});
export type CollaborationComplete = z.infer<typeof CollaborationComplete>;

export const Collaboration = z.object({
  id: z.string(),
  phase: CollabPhase,
  initiator: AgentName,
  /** Everyone in it, the initiator first. */
  participants: z.array(AgentName),
  context: z.record(z.string(), z.unknown()),
  /** The negotiate message on the table, and the terms agreed. */
  proposal_id: z.string().nullable(),
  terms: z.record(z.string(), z.unknown()).nullable(),
  outcome: z.enum(["succeeded", "failed", "cancelled", "rejected"]).nullable(),
  result: z.unknown().optional(),
  messages: z.array(CollabMessage),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Collaboration = z.infer<typeof Collaboration>;

export const BLOCKING_STATUSES = ["none", "internal", "user"] as const;

/** `GET /v1/agents/:name/blocking` (docs/collaboration.md, Collaborations). */
export const BlockingStatus = z.object({
  status: z.enum(BLOCKING_STATUSES),
  /** The agent it waits for (internal), or "user" (a person in the inbox). */
  waiting_for: z.string().nullable(),
  reason: z.string().nullable(),
  message_id: z.string().nullable(),
  started_at: z.string().nullable(),
});
export type BlockingStatus = z.infer<typeof BlockingStatus>;

// ── Supervisor fan-out (docs/collaboration.md) ─────────────────────────────

export const AgentTask = z.strictObject({
  task_id: z.string().min(1).max(100),
  agent: AgentName,
  instruction: z.string().trim().min(1).max(8000),
  timeout_s: z.number().int().min(1).max(3600).default(60),
});
export type AgentTask = z.infer<typeof AgentTask>;

/** What the supervisor split the request into; more than one task ⇒ the results are aggregated. */
export const TaskDecomposition = z
  .strictObject({
    original_query: z
      .string()
      .min(1)
      .max(32 * 1024),
    tasks: z.array(AgentTask).min(1).max(20),
    requires_aggregation: z.boolean().optional(),
  })
  .superRefine((d, ctx) => {
    const ids = new Set<string>();
    d.tasks.forEach((t, i) => {
      if (ids.has(t.task_id))
        ctx.addIssue({ code: "custom", path: ["tasks", i, "task_id"], message: `duplicate task_id '${t.task_id}'` });
      ids.add(t.task_id);
    });
    if (d.requires_aggregation === false && d.tasks.length > 1)
      ctx.addIssue({ code: "custom", path: ["requires_aggregation"], message: "more than one task needs aggregation" });
  })
  .transform((d) => ({ ...d, requires_aggregation: d.tasks.length > 1 }));
export type TaskDecomposition = z.infer<typeof TaskDecomposition>;

/** One task's outcome: success carries data, failure carries an error, time is never negative. */
export const AgentResult = z
  .strictObject({
    task_id: z.string().min(1),
    agent: AgentName,
    success: z.boolean(),
    data: z.unknown().optional(),
    error: z.string().min(1).optional(),
    execution_time: z.number().min(0),
  })
  .superRefine((r, ctx) => {
    if (r.success && r.data === undefined)
      ctx.addIssue({ code: "custom", path: ["data"], message: "a success carries data" });
    if (!r.success && r.error === undefined)
      ctx.addIssue({ code: "custom", path: ["error"], message: "a failure carries an error" });
    if (r.success && r.error !== undefined)
      ctx.addIssue({ code: "custom", path: ["error"], message: "a success has no error" });
  });
export type AgentResult = z.infer<typeof AgentResult>;

export const FANOUT_STATES = ["INIT", "DECOMPOSED", "EXECUTING", "AGGREGATING", "COMPLETED", "FAILED"] as const;
export const FanoutState = z.enum(FANOUT_STATES);
export type FanoutState = z.infer<typeof FanoutState>;

/** `POST /v1/sessions/:id/fan-out`: the request to split (Relay decomposes it), or the decomposition itself. */
export const FanoutStart = z
  .strictObject({
    input: z
      .string()
      .trim()
      .min(1)
      .max(32 * 1024)
      .optional(),
    decomposition: TaskDecomposition.optional(),
  })
  .refine((b) => (b.input === undefined) !== (b.decomposition === undefined), {
    message: "give either input or decomposition",
    path: ["input"],
  });
export type FanoutStart = z.infer<typeof FanoutStart>;

/** A supervisor's fan-out as the API returns it. */
export const Fanout = z.object({
  id: z.string(),
  session_id: z.string(),
  supervisor: AgentName,
  state: FanoutState,
  /** Who split the request: the caller, the supervisor's model, or Relay's rule-based decomposer. */
  decomposed_by: z.enum(["request", "model", "rules"]),
  decomposition: TaskDecomposition,
  /** In the order they came. */
  results: z.array(AgentResult),
  /** The aggregated answer (COMPLETED), or null. */
  response: z.string().nullable(),
  /** States passed through, in order. */
  states: z.array(z.object({ state: FanoutState, at: z.string() })),
  /** The run whose `fan_out` call started it (null: the API). */
  run_id: z.string().nullable().default(null),
  started_at: z.string(),
  ended_at: z.string().nullable(),
});
export type Fanout = z.infer<typeof Fanout>;

/** How one requirement was met. */
export const CapabilityHit = z.strictObject({
  /** The requirement, as the caller spelled it. */
  required: z.string(),
  /** The agent's capability that met it. */
  capability: z.string(),
  via: z.enum(["name", "tag"]),
  /** What it added to the sum: proficiency, or proficiency × TAG_WEIGHT for a tag. */
  weight: z.number(),
});
export type CapabilityHit = z.infer<typeof CapabilityHit>;

/** One agent as the capability matcher ranks it. */
export const CapabilityMatch = z.strictObject({
  agent: z.string(),
  /** 0..1, rounded to 4 decimals. */
  score: z.number().min(0).max(1),
  /** Requirements met, in the order asked. */
  matched: z.array(z.string()),
  /** Requirements not met, in the order asked. */
  missing: z.array(z.string()),
  hits: z.array(CapabilityHit),
});
export type CapabilityMatch = z.infer<typeof CapabilityMatch>;
