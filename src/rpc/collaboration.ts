import type { Result } from "../errors";
import type { SentMessage } from "../schemas/api";
import type {
  CollabMessage,
  CollabMessageInput,
  Collaboration,
  CollaborationComplete,
  CollaborationCreate,
  EscalationResolve,
} from "../schemas/collaboration";

export type { SentMessage };

/** The CollaborationDO's RPC contract (durable-objects/collaboration/collaboration.ts implements it). */

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
