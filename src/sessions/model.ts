import * as z from "zod";
import type { Actor } from "../audit/record";
import { AgentName } from "../schemas/agent";
import { HandoffContext, type HistoryItem } from "../schemas/handoff";
import { type AgentTurnStatus, InFlightHandoff, type SessionMessage, type SessionView } from "../schemas/session";

/**
 * A session as its Durable Object stores it, and the pure functions over it. Times are
 * ms since the epoch here and ISO 8601 in views.
 */

/** `deleted` and `expired` sessions wait only for their audit to reach D1 before their storage goes. */
export const SESSION_LIFECYCLE = ["active", "expired", "deleted"] as const;
export type SessionLifecycle = (typeof SESSION_LIFECYCLE)[number];

/** A session as its object stores it (parsed on read: the stored row's format is SESSION_FORMAT). */
export const SessionRecord = z.object({
  id: z.string(),
  tenant: z.string(),
  status: z.enum(SESSION_LIFECYCLE),
  current_agent: AgentName,
  /** Root first, current agent last. */
  handoff_stack: z.array(AgentName),
  state: z.record(z.string(), z.unknown()),
  metadata: z.record(z.string(), z.unknown()),
  ttl_s: z.number().int().positive(),
  handoff_count: z.number().int().min(0),
  /** Written by the handoff flow in the same transaction as the step it records. */
  in_flight_handoff: InFlightHandoff.nullable(),
  last_handoff_context: HandoffContext.nullable(),
  created_at: z.number(),
  updated_at: z.number(),
  expires_at: z.number(),
  /** When it expired or was deleted. */
  ended_at: z.number().nullable(),
});
export type SessionRecord = z.infer<typeof SessionRecord>;

/** The format of the stored session row; a later format comes with an upgrade of older rows. */
export const SESSION_FORMAT = 1;

export interface NewSession {
  id: string;
  tenant: string;
  agent: string;
  metadata: Record<string, unknown>;
  ttl_s: number;
}

export function newSession(input: NewSession, now: number): SessionRecord {
  return {
    id: input.id,
    tenant: input.tenant,
    status: "active",
    current_agent: input.agent,
    handoff_stack: [input.agent],
    state: {},
    metadata: input.metadata,
    ttl_s: input.ttl_s,
    handoff_count: 0,
    in_flight_handoff: null,
    last_handoff_context: null,
    created_at: now,
    updated_at: now,
    expires_at: now + input.ttl_s * 1000,
    ended_at: null,
  };
}

/** Every mutation is activity: it pushes the idle expiry to now + ttl. */
export function touch(session: SessionRecord, now: number): SessionRecord {
  return { ...session, updated_at: now, expires_at: now + session.ttl_s * 1000 };
}

export function isIdleExpired(session: SessionRecord, now: number): boolean {
  return session.status === "active" && session.expires_at <= now;
}

export function end(session: SessionRecord, status: "expired" | "deleted", now: number): SessionRecord {
  return { ...session, status, ended_at: now };
}

const iso = (ms: number) => new Date(ms).toISOString();

export function toView(
  session: SessionRecord,
  historyLength: number,
  agentStatus: Record<string, AgentTurnStatus>,
): SessionView {
  return {
    id: session.id,
    status: session.status === "expired" ? "expired" : "active",
    current_agent: session.current_agent,
    handoff_stack: session.handoff_stack,
    state: session.state,
    metadata: session.metadata,
    history_length: historyLength,
    in_flight_handoff: session.in_flight_handoff,
    last_handoff_context: session.last_handoff_context,
    agent_status: agentStatus,
    created_at: iso(session.created_at),
    updated_at: iso(session.updated_at),
    expires_at: iso(session.expires_at),
  };
}

/**
 * A posted message as a history item: `agent` is the API's synonym of `assistant`, and an
 * assistant message with no agent named is the current agent's.
 */
export function toHistoryItem(
  message: SessionMessage,
  currentAgent: string,
  id: string,
  now: number,
): HistoryItem & { id: string } {
  const role = message.role === "agent" ? "assistant" : message.role;
  const agent = message.agent ?? (role === "assistant" ? currentAgent : undefined);
  const item: HistoryItem & { id: string } = { id, role, content: message.content, created_at: iso(now) };
  if (agent !== undefined) item.agent = agent;
  if (message.type !== undefined) item.type = message.type;
  if (message.tool_name !== undefined) item.tool_name = message.tool_name;
  return item;
}

/** Who wrote a message: an agent when it names one or speaks as assistant, else the API caller. */
export function messageActor(item: HistoryItem, caller: Actor): Actor {
  return item.agent !== undefined && item.role !== "user" ? { actor: item.agent, actor_type: "agent" } : caller;
}

/** The row archived to D1 when a session expires. */
export interface SessionSummary {
  tenant: string;
  session_id: string;
  created_at: string;
  expired_at: string;
  current_agent: string;
  history_length: number;
  handoff_count: number;
  summary: {
    handoff_stack: string[];
    metadata: Record<string, unknown>;
    state_keys: string[];
    agent_status: Record<string, AgentTurnStatus>;
    ttl_s: number;
    last_activity_at: string;
  };
}

export function summarize(
  session: SessionRecord,
  historyLength: number,
  agentStatus: Record<string, AgentTurnStatus>,
): SessionSummary {
  return {
    tenant: session.tenant,
    session_id: session.id,
    created_at: iso(session.created_at),
    expired_at: iso(session.ended_at ?? session.expires_at),
    current_agent: session.current_agent,
    history_length: historyLength,
    handoff_count: session.handoff_count,
    summary: {
      handoff_stack: session.handoff_stack,
      metadata: session.metadata,
      // Keys only: state values are the application's data, not an archive's.
      state_keys: Object.keys(session.state).sort(),
      agent_status: agentStatus,
      ttl_s: session.ttl_s,
      last_activity_at: iso(session.updated_at),
    },
  };
}
