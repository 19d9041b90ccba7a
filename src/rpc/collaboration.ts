import type { Result } from "../errors";
import type { CapabilityMatch } from "../collaboration/capability-match";
import type { CollabMessage, CollabMessageInput, Collaboration, CollaborationCreate, CollaborationComplete, EscalationResolve } from "../schemas/collaboration";

/** The CollaborationDO's RPC contract (durable-objects/collaboration.ts implements it). */

export interface SentMessage {
  message: CollabMessage;
  /** A capability broadcast's answer: the participants ranked by the capability matcher. */
  matches?: CapabilityMatch[];
}

export interface CollaborationRpc {
  create(tenant: string, id: string, args: CollaborationCreate): Promise<Result<Collaboration>>;
  get(): Promise<Result<Collaboration>>;
  send(message: CollabMessageInput): Promise<Result<SentMessage>>;
  complete(args: CollaborationComplete): Promise<Result<Collaboration>>;
  /** A person's answer to an escalation: it is answered, and a blocking one frees its sender. */
  resolveEscalation(messageId: string, args: EscalationResolve): Promise<Result<CollabMessage>>;
  /** A query's wait ended from outside: a deadlock broken at its waiter (idempotent). */
  resolveWait(messageId: string, code: "DEADLOCK_RESOLVED", cycle: string[]): Promise<Result<{ resolved: boolean }>>;
}
