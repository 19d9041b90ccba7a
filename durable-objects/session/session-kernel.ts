import type { AuditScope } from "../../src/audit/events";
import type { AuditRecord } from "../../src/audit/record";
import type { Env } from "../../src/env";
import type { Result } from "../../src/errors";
import type { SessionView } from "../../src/schemas/session";
import type { SessionRecord } from "../../src/sessions/model";
import type { Outbox } from "../shared/outbox";
import type { SchemaGate } from "../shared/sql";
import type { Timers } from "../shared/timers";
import type { InboxStore } from "./inbox-store";
import type { LiveDeltas } from "./live/live-hub";
import type { LiveStore } from "./live/live-store";
import type { CompactionStore } from "./memory/compaction-store";
import type { MemoryStore } from "./memory/memory-store";
import type { SessionStore } from "./session-store";

/**
 * What the SessionDO shares with its parts: its stores and the one write path. Each part
 * takes only the members it uses, as `Pick<SessionKernel, …>` in its constructor, so what a
 * part can touch is written at its top; only the two that build other parts (SessionRuns,
 * SessionHandoffs) hold the whole kernel to hand on.
 */
export interface SessionKernel {
  readonly storage: DurableObjectStorage;
  readonly env: Env;
  /**
   * Which tables the object holds: a session makes most of its tables when a statement
   * first names them (SESSION_TABLES_DEFERRED), so a read that must not make one asks first;
   * a write known to need several makes them in one step (`make`).
   */
  readonly tables: Pick<SchemaGate, "has" | "make">;
  readonly store: SessionStore;
  readonly outbox: Outbox;
  readonly timers: Timers;
  readonly inbox: InboxStore;
  /** The session's memory of facts (docs/memory.md, Facts). */
  readonly memory: MemoryStore;
  /** The compactions of its agents' views (docs/memory.md, Compaction). */
  readonly compactions: CompactionStore;
  /** Live events for SSE and WebSocket subscribers, published after each commit. */
  readonly liveEvents: LiveStore;
  /** The pieces of an answer as a model writes them, sent at once (never stored). */
  readonly deltas: LiveDeltas;
  /** The object's clock. */
  now(): number;
  /**
   * Called when a flow reaches a checkpoint between its recorded steps. Does nothing in
   * production; the crash-safety tests' subclass of SessionDO stops the flow there.
   */
  checkpoint(point: FlowCheckpoint): void;
  /** The active session, or SESSION_NOT_FOUND / SESSION_EXPIRED. */
  live(): Result<SessionRecord>;
  view(session: SessionRecord): SessionView;
  /**
   * The one write path: the session row, its audit records and `extra` writes in one
   * transaction, then the outbox flush and idle-expiry timers, then the alarm.
   */
  commit(session: SessionRecord, records: readonly AuditRecord[], extra?: () => void): Promise<void>;
  /**
   * `transactionSync` for every write of the object's tables: when it throws (rolled back),
   * what the instance keeps in memory about them (timers, the session lease) is dropped.
   */
  transaction<T>(fn: () => T): T;
  /** Wipes the object's storage and alarm. Only once every audit record reached D1. */
  destroy(): Promise<void>;
}

/**
 * Points between a handoff flow's recorded steps: after its intent is committed, after the
 * lease is granted, before the switch's commit, inside the switch's transaction, after it;
 * and inside a compaction's transaction (docs/memory.md).
 */
export const FLOW_CHECKPOINTS = [
  "after_intent",
  "after_lease",
  "before_commit",
  "activate",
  "after_commit",
  "compaction",
] as const;
export type FlowCheckpoint = (typeof FLOW_CHECKPOINTS)[number];

export function auditScope(session: SessionRecord): AuditScope {
  return { tenant: session.tenant, session_id: session.id };
}
