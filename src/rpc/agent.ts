import type { Probe } from "../collaboration/deadlock";
import type { Result } from "../errors";
import type { AgentLoad, Lease } from "../schemas/agent-load";
import type { BlockingStatus } from "../schemas/collaboration";

/**
 * The AgentDO's RPC contract (durable-objects/agent/agent.ts implements it): an agent's status
 * and its capacity leases. Types only, so the Worker and the SessionDO depend on this
 * file rather than on the class.
 */

export { AGENT_STATUSES, type AgentLoad, type AgentStatus, type Lease } from "../schemas/agent-load";

/** Whose lease to release: one lease, or whatever the session holds here. */
export type LeaseRef = { lease_id: string } | { session_id: string };

/** A wait this agent starts (docs/collaboration.md): on another agent's answer (internal) or a person's (user). */
export interface WaitStart {
  tenant: string;
  /** This agent's name (the object does not know it). */
  self: string;
  kind: "internal" | "user";
  /** The agent waited for, or "user". */
  to: string;
  reason: string;
  message_id: string;
  collaboration_id: string;
}

export interface AgentRpc {
  /**
   * A tentative lease for a session's handoff, lapsing after `ttlMs` unless confirmed. The
   * same session and handoff get the same lease back; a session holding a lease here keeps it.
   */
  acquire(sessionId: string, handoffId: string, ttlMs: number, capacity: number): Promise<Result<Lease>>;
  /** Tentative → held (idempotent); refused when lapsed, released, or fenced off. */
  confirm(leaseId: string, fencingToken?: number): Promise<Result<Lease>>;
  /** Idempotent: releasing what is not there is `released: false`. */
  release(ref: LeaseRef, fencingToken?: number): Promise<Result<{ released: boolean }>>;
  load(): Promise<Result<AgentLoad>>;
  pause(): Promise<Result<AgentLoad>>;
  resume(): Promise<Result<AgentLoad>>;
  /** Starts a wait: the agent is blocked (its wait-for edge is probed for deadlocks). */
  blockOn(wait: WaitStart): Promise<Result<BlockingStatus>>;
  /** Ends the wait on a message (idempotent). */
  unblock(messageId: string): Promise<Result<BlockingStatus>>;
  blocking(): Promise<Result<BlockingStatus>>;
  /** A deadlock probe arriving along a wait-for edge (edge-chasing). */
  probe(tenant: string, self: string, probe: Probe): Promise<Result<{ cycle: string[] | null }>>;
  /** Breaks this agent's wait on `messageId`, the earliest in a detected cycle (idempotent). */
  breakWait(messageId: string, cycle: string[]): Promise<Result<{ broken: boolean }>>;
}
