import type { Env } from "../src/env";
import { agentObjectName, sessionObjectName } from "../src/sessions/ids";
import type { AgentDO } from "./agent";
import type { SessionDO } from "./session";

/**
 * Typed RPC handles for the Worker. The workers-types RPC mapping turns any `unknown`
 * (free-form JSON such as state, metadata, details) into `never`, although structured
 * clone carries it fine; these handles keep the methods' own signatures instead.
 */

export type SessionRpc = Pick<SessionDO, "create" | "get" | "addMessage" | "history" | "patchState" | "setAgentStatus" | "delete" | "audit">;
export type AgentRpc = Pick<AgentDO, "acquire" | "confirm" | "release" | "load" | "pause" | "resume">;

export function sessionStubFor(env: Pick<Env, "SESSIONS">, tenant: string, sessionId: string): DurableObjectStub<SessionDO> {
  return env.SESSIONS.get(env.SESSIONS.idFromName(sessionObjectName(tenant, sessionId)));
}

export function agentStubFor(env: Pick<Env, "AGENTS">, tenant: string, agent: string): DurableObjectStub<AgentDO> {
  return env.AGENTS.get(env.AGENTS.idFromName(agentObjectName(tenant, agent)));
}

/** The session `sessionId` of `tenant`; another tenant's name reaches another (empty) object. */
export function sessionRpc(env: Pick<Env, "SESSIONS">, tenant: string, sessionId: string): SessionRpc {
  return sessionStubFor(env, tenant, sessionId) as unknown as SessionRpc;
}

export function agentRpc(env: Pick<Env, "AGENTS">, tenant: string, agent: string): AgentRpc {
  return agentStubFor(env, tenant, agent) as unknown as AgentRpc;
}
