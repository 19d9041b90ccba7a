import * as z from "zod";
import { AgentName } from "./agent";
import {
  ContentText,
  HandoffContext,
  HandoffMode,
  HandoffPolicy,
  HandoffStatus,
  HistoryItem,
  HistoryItemType,
} from "./handoff";
import { isReservedKey, RESERVED_KEYS, withoutReservedKeys } from "./reserved-keys";

/** Session schemas: the bodies of the `/v1/sessions` routes and the view `GET /v1/sessions/:id` returns. */

export const SessionId = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, "must be a session id");
export type SessionId = z.infer<typeof SessionId>;

export const MIN_TTL_S = 60;
export const MAX_TTL_S = 30 * 24 * 3600;
export const DEFAULT_TTL_S = 24 * 3600;

export const AfterTurn = z.enum(["stay", "return_to_root"]);
export type AfterTurn = z.infer<typeof AfterTurn>;

/**
 * `POST /v1/sessions`. With no `agent`, the router picks one from `input` (stored as the
 * first message; post messages to run agents). Run settings are kept in the session's
 * metadata (`after_turn`, `max_turns`, `max_handoff_depth`).
 */
export const SessionCreate = z.strictObject({
  agent: AgentName.optional(),
  input: ContentText.pipe(z.string().min(1)).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  /** Idle time before the session expires. */
  ttl_s: z.number().int().min(MIN_TTL_S).max(MAX_TTL_S).default(DEFAULT_TTL_S),
  /** Who takes the next user message after a run: the agent that answered (`stay`), or the root of the stack. */
  after_turn: AfterTurn.optional(),
  /** Model (or webhook) calls one run may make before it fails with MAX_TURNS_EXCEEDED (default 10). */
  max_turns: z.number().int().min(1).max(100).optional(),
});
export type SessionCreate = z.infer<typeof SessionCreate>;

/** `agent` is accepted as a synonym of `assistant` for messages an agent writes. */
export const SessionMessageRole = z.enum(["user", "agent", "assistant", "system", "tool"]);
export type SessionMessageRole = z.infer<typeof SessionMessageRole>;

/**
 * `POST /v1/sessions/:id/messages`. A user message runs the current agent's turn unless
 * `run` is false; any other role (a transcript the caller keeps itself) is only stored.
 */
export const SessionMessage = z
  .strictObject({
    role: SessionMessageRole,
    agent: AgentName.optional(),
    content: ContentText.pipe(z.string().min(1)),
    type: HistoryItemType.optional(),
    tool_name: z.string().min(1).max(100).optional(),
    run: z.boolean().optional(),
    /**
     * Capabilities the message needs: when the current agent lacks them, its capability triggers hand
     * it on before it runs.
     */
    required_capabilities: z.array(z.string().trim().min(1).max(100)).min(1).max(20).optional(),
  })
  .superRefine((message, ctx) => {
    if (message.run === true && message.role !== "user")
      ctx.addIssue({ code: "custom", path: ["run"], message: "only a user message runs the agent" });
  });
export type SessionMessage = z.infer<typeof SessionMessage>;

/** `POST /v1/sessions/:id/events`: a named session event for event triggers. */
export const SessionEvent = z.strictObject({
  name: z.string().trim().min(1).max(100),
  data: z.unknown().optional(),
});
export type SessionEvent = z.infer<typeof SessionEvent>;

/** `POST /v1/sessions/:id/triggers`: fire the current agent's explicit trigger for a handoff to `target`. */
export const TriggerFire = z.strictObject({ target: AgentName });

/**
 * State keys are identifiers so condition expressions (docs/handoffs.md, Conditions) can reach them as
 * `key.sub.path`; values are any JSON. `__proto__`, `constructor` and `prototype` are
 * refused as keys at every depth (./reserved-keys.ts): conditions cannot name them either.
 */
export const StateKey = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, "must be an identifier (letters, digits, '_')")
  .refine((key) => !isReservedKey(key), { message: `must not be a reserved name (${RESERVED_KEYS.join(", ")})` });

/**
 * `PATCH /v1/sessions/:id/state`: explicit `set` and `unset` rather than a merge patch,
 * so a key can be set to `null` and removing a key is unambiguous. `unset` runs after
 * `set`; a key may not be in both.
 */
export const SessionStatePatch = z
  .strictObject({
    set: withoutReservedKeys(z.record(StateKey, z.unknown())).optional(),
    unset: z.array(StateKey).max(100).optional(),
  })
  .superRefine((patch, ctx) => {
    const setKeys = Object.keys(patch.set ?? {});
    if (setKeys.length === 0 && (patch.unset ?? []).length === 0) {
      ctx.addIssue({ code: "custom", path: [], message: "a state patch needs at least one key in set or unset" });
    }
    if (setKeys.length > 100) ctx.addIssue({ code: "custom", path: ["set"], message: "at most 100 keys per patch" });
    for (const key of patch.unset ?? []) {
      if (setKeys.includes(key))
        ctx.addIssue({ code: "custom", path: ["unset"], message: `'${key}' is both set and unset` });
    }
  });
export type SessionStatePatch = z.infer<typeof SessionStatePatch>;

/** Applies a state patch without touching the input: a new object with `set` merged and `unset` removed. */
export function applyStatePatch(state: Record<string, unknown>, patch: SessionStatePatch): Record<string, unknown> {
  const next: Record<string, unknown> = { ...state };
  for (const [key, value] of Object.entries(patch.set ?? {})) next[key] = value;
  for (const key of patch.unset ?? []) delete next[key];
  return next;
}

export const SessionStatus = z.enum(["active", "expired"]);
export type SessionStatus = z.infer<typeof SessionStatus>;

/** What an agent reports about its turn; graceful handoffs wait for `idle`. */
export const AgentTurnStatus = z.enum(["busy", "idle"]);
export type AgentTurnStatus = z.infer<typeof AgentTurnStatus>;

/** `POST /v1/sessions/:id/agent-status`. */
export const AgentStatusUpdate = z.strictObject({
  agent: AgentName,
  status: AgentTurnStatus,
});
export type AgentStatusUpdate = z.infer<typeof AgentStatusUpdate>;

/** The handoff a session has in flight, as its view summarizes it. */
export const InFlightHandoff = z.strictObject({
  id: z.string(),
  status: HandoffStatus,
  mode: HandoffMode,
  policy: HandoffPolicy,
  source: AgentName,
  target: AgentName.nullable(),
  deadline_at: z.string().optional(),
});
export type InFlightHandoff = z.infer<typeof InFlightHandoff>;

/** What `GET /v1/sessions/:id` returns. Times are ISO 8601. */
export const SessionView = z.strictObject({
  id: SessionId,
  status: SessionStatus,
  current_agent: AgentName.nullable(),
  /** Root first, current agent last. */
  handoff_stack: z.array(AgentName),
  state: z.record(z.string(), z.unknown()),
  metadata: z.record(z.string(), z.unknown()),
  history_length: z.number().int().min(0),
  in_flight_handoff: InFlightHandoff.nullable(),
  /** The context of the last completed handoff: what the current agent was handed. */
  last_handoff_context: HandoffContext.nullable(),
  /** Last status each agent reported in this session. */
  agent_status: z.record(AgentName, AgentTurnStatus),
  created_at: z.string(),
  updated_at: z.string(),
  expires_at: z.string(),
});
export type SessionView = z.infer<typeof SessionView>;

export const SessionIndexStatus = z.enum(["active", "expired", "deleted"]);
export type SessionIndexStatus = z.infer<typeof SessionIndexStatus>;

/** One session as `GET /v1/sessions` lists it (the D1 sessions index). */
export const SessionIndexRow = z.strictObject({
  id: SessionId,
  status: SessionIndexStatus,
  /** The agent the session started with. */
  initial_agent: z.string().nullable(),
  /** The agent holding the session after its last completed handoff. */
  current_agent: z.string(),
  created_at: z.string(),
  /** The time of the session's last audited change. */
  updated_at: z.string(),
  /** When it expired or was deleted. */
  ended_at: z.string().nullable(),
  message_count: z.number().int().min(0),
  handoff_count: z.number().int().min(0),
});
export type SessionIndexRow = z.infer<typeof SessionIndexRow>;

/** A history item as `GET /v1/sessions/:id/messages` lists it: with its tokens (null: not counted yet, docs/memory.md). */
export const StoredHistoryItem = HistoryItem.extend({ tokens: z.number().int().min(0).nullable() });
export type StoredHistoryItem = z.infer<typeof StoredHistoryItem>;
