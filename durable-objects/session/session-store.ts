import type { HistoryItem, TaskItem } from "../../src/schemas/handoff";
import type { AgentTurnStatus } from "../../src/schemas/session";
import { SESSION_FORMAT, SessionRecord } from "../../src/sessions/model";
import {
  OUTBOX_ACTOR_DDL,
  OUTBOX_DDL,
  OUTBOX_PENDING_ONLY_DDL,
  OUTBOX_WATERMARK_DDL,
  OUTBOX_WATERMARK_MIGRATION,
} from "../shared/outbox";
import { foldSchemaChanges, rebuildTable, withoutAutoincrement, withoutRowid } from "../shared/schema-text";
import { ALL_TABLES, type DeferredTables, type SchemaMigration, type Sql, type TablesHeld } from "../shared/sql";
import { TIMERS_DDL, TIMERS_FORMAT_DDL, TIMERS_NO_DUE_INDEX_DDL } from "../shared/timers";
import { DELIVERIES_DDL } from "./deliveries/delivery-store";
import { FANOUT_DDL } from "./fanout/fanout-store";
import {
  HANDOFF_DDL,
  HANDOFF_FORMAT_DDL,
  HANDOFF_HIDDEN_CALLS_DDL,
  HANDOFF_INBOX_V2_DDL,
  HANDOFF_TABLES,
} from "./handoffs/handoff-store";
import { INBOX_APPROVAL_DDL, INBOX_DDL, INBOX_SCHEMA } from "./inbox-store";
import { LIVE_DDL, LIVE_NO_RUN_INDEX_DDL } from "./live/live-store";
import { COMPACTIONS_DDL, MESSAGE_TOKENS_DDL } from "./memory/compaction-store";
import { MEMORY_DDL } from "./memory/memory-store";
import { REMOTE_THREADS_DDL } from "./runs/remote-threads";
import { RUN_CANCEL_DDL, RUN_DDL, RUN_EVENTS_NO_RUN_INDEX_DDL, RUN_SCHEMA, RUN_WORK_DDL } from "./runs/run-store";
import { TELEMETRY_EXPORTS_DDL } from "./telemetry/export-store";
import { TRIGGER_QUEUE_DDL } from "./triggers/trigger-queue";

/**
 * The SessionDO's own tables: the session row, its history, the agents' turn status,
 * plus the shared outbox and timers. Later features add versions to SESSION_MIGRATIONS.
 */

/** v1's own tables: the session row, the history, the agents' turn status. */
const SESSION_V1_DDL = [
  `CREATE TABLE session (
         id                    INTEGER PRIMARY KEY CHECK (id = 1),
         session_id            TEXT NOT NULL,
         tenant                TEXT NOT NULL,
         status                TEXT NOT NULL CHECK (status IN ('active', 'expired', 'deleted')),
         current_agent         TEXT NOT NULL,
         handoff_stack         TEXT NOT NULL,
         state                 TEXT NOT NULL,
         metadata              TEXT NOT NULL,
         ttl_s                 INTEGER NOT NULL CHECK (ttl_s > 0),
         handoff_count         INTEGER NOT NULL DEFAULT 0,
         in_flight_handoff     TEXT,
         last_handoff_context  TEXT,
         created_at            INTEGER NOT NULL,
         updated_at            INTEGER NOT NULL,
         expires_at            INTEGER NOT NULL,
         ended_at              INTEGER
       )`,
  `CREATE TABLE messages (
         seq         INTEGER PRIMARY KEY AUTOINCREMENT,
         id          TEXT NOT NULL UNIQUE,
         role        TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
         agent       TEXT,
         item        TEXT NOT NULL,
         created_at  INTEGER NOT NULL
       )`,
  `CREATE TABLE agent_status (
         agent       TEXT PRIMARY KEY,
         status      TEXT NOT NULL CHECK (status IN ('busy', 'idle')),
         updated_at  INTEGER NOT NULL
       )`,
] as const;

/** v3: stored JSON carries a format version. */
const FORMAT_DDL = [
  `ALTER TABLE session ADD COLUMN format INTEGER NOT NULL DEFAULT ${SESSION_FORMAT}`,
  ...HANDOFF_FORMAT_DDL,
  ...TIMERS_FORMAT_DDL,
] as const;

/**
 * v10: the session row names the handoff whose context the current agent was handed, and
 * the context is read from that handoff's row, where the switch stored it in the same
 * transaction. The session row is rewritten by every commit; the context (the filtered
 * history) grows with the conversation, so as a copy in the session row a long
 * conversation made every message cost more, and every handoff wrote it twice.
 */
const LAST_HANDOFF_ID_DDL = "ALTER TABLE session ADD COLUMN last_handoff_id TEXT";
const NAME_LAST_HANDOFF =
  "UPDATE session SET last_handoff_id = json_extract(last_handoff_context, '$.metadata.handoff_id')";
const DROP_CONTEXT_COPY_DDL = "ALTER TABLE session DROP COLUMN last_handoff_context";

/**
 * The tables keyed by a text id that a session writes most: v14–v17 make them `WITHOUT
 * ROWID`, so each row inserted writes one b-tree row fewer (see `withoutRowid`).
 */
const KEYED_BY_ID = ["audit", "timers", "live_events", "run_events", "runs"] as const;

/**
 * The newest schema's statements, what SESSION_MIGRATIONS leave, made directly (no table
 * created only to be rebuilt or dropped, no data moved). Columns added by ALTER are written
 * into their CREATE TABLE as SQLite would store them, dropped columns and indexes left out
 * (`foldSchemaChanges`), the tables keyed by id made without a rowid and the history
 * without AUTOINCREMENT; test/durable-objects/session/session-schema.test.ts holds the two equal. A new migration
 * changes both; one that changes a table a new object makes only when first needed
 * (SESSION_TABLES_DEFERRED) names it in `SchemaMigration.table`, since an object may not
 * hold that table yet.
 */
/** The schema's text from `statements`: changes folded in, tables keyed by id without a rowid, `seq` without AUTOINCREMENT. */
const madeDirectly = (statements: readonly string[]) =>
  withoutAutoincrement(
    withoutRowid(foldSchemaChanges(statements), KEYED_BY_ID),
    // v18: the history's `seq` without AUTOINCREMENT (a row of `sqlite_sequence` with every message).
    ["messages"],
  );

/** Every statement through v21, before messages counted their tokens (v18 rebuilds the history as it was then). */
const THROUGH_V21 = [
  ...SESSION_V1_DDL,
  ...OUTBOX_DDL,
  ...TIMERS_DDL,
  ...HANDOFF_DDL,
  ...FORMAT_DDL,
  ...HANDOFF_HIDDEN_CALLS_DDL,
  ...RUN_SCHEMA,
  ...INBOX_SCHEMA,
  ...LIVE_DDL,
  ...TRIGGER_QUEUE_DDL,
  ...DELIVERIES_DDL,
  ...FANOUT_DDL,
  LAST_HANDOFF_ID_DDL,
  DROP_CONTEXT_COPY_DDL,
  ...REMOTE_THREADS_DDL,
  ...OUTBOX_PENDING_ONLY_DDL,
  ...TIMERS_NO_DUE_INDEX_DDL,
  ...OUTBOX_WATERMARK_DDL,
  LIVE_NO_RUN_INDEX_DDL,
  RUN_EVENTS_NO_RUN_INDEX_DDL,
];

/**
 * v24: a user message keeps the id its client gave it (an A2A message's `messageId`), which an
 * A2A task's history shows in place of Relay's own (docs/a2a.md).
 */
const MESSAGE_CLIENT_ID_DDL = "ALTER TABLE messages ADD COLUMN client_id TEXT";

const SESSION_STATEMENTS = madeDirectly([
  ...THROUGH_V21,
  MESSAGE_TOKENS_DDL,
  ...COMPACTIONS_DDL,
  ...MEMORY_DDL,
  MESSAGE_CLIENT_ID_DDL,
  ...TELEMETRY_EXPORTS_DDL,
]);

/** A table keyed by id made again without a rowid, its rows kept. */
const keyedById = (table: (typeof KEYED_BY_ID)[number]) => rebuildTable(SESSION_STATEMENTS, table, `${table}_v13`);

export const SESSION_MIGRATIONS: readonly SchemaMigration[] = [
  { version: 1, statements: [...SESSION_V1_DDL, ...OUTBOX_DDL, ...TIMERS_DDL] },
  // Handoffs, idempotency keys, the current agent's lease, queued releases, the inbox.
  { version: 2, statements: [...HANDOFF_DDL, ...HANDOFF_INBOX_V2_DDL] },
  // Stored JSON carries a format version; the handoff timer kind splits in two.
  {
    version: 3,
    statements: [
      ...FORMAT_DDL,
      `UPDATE timers SET kind = 'handoff.deadline', key = 'handoff.deadline' WHERE kind = 'handoff.timeout' AND payload LIKE '{"handoff_id":%'`,
      `UPDATE timers SET kind = 'handoff.sweep', key = 'handoff.sweep', payload = 'null' WHERE kind = 'handoff.timeout'`,
    ],
  },
  // Runs and their trace; the inbox for people (its v2 escalations move over); handoffs keep calls from their target.
  { version: 4, statements: [...RUN_DDL, ...INBOX_DDL, ...HANDOFF_HIDDEN_CALLS_DDL] },
  // Tools and approvals: runs pause for them and keep their work; the inbox asks for approvals.
  { version: 5, statements: [...RUN_WORK_DDL, ...INBOX_APPROVAL_DDL] },
  // Live events for SSE and WebSocket subscribers, kept for replay.
  { version: 6, statements: LIVE_DDL },
  // Trigger points that arrived while the session was busy; the outbox takes actor_type trigger.
  { version: 7, statements: [...TRIGGER_QUEUE_DDL, ...OUTBOX_ACTOR_DDL] },
  // Lifecycle notifications waiting for the tenant's events_url.
  { version: 8, statements: DELIVERIES_DDL },
  // Supervisor fan-outs.
  { version: 9, statements: FANOUT_DDL },
  // The session row names the last handoff rather than copying its context.
  { version: 10, statements: [LAST_HANDOFF_ID_DDL, NAME_LAST_HANDOFF, DROP_CONTEXT_COPY_DDL] },
  // Runs may be cancelled.
  { version: 11, statements: RUN_CANCEL_DDL },
  // Threads with remote A2A agents.
  { version: 12, statements: REMOTE_THREADS_DDL },
  // Fewer rows written: the outbox's pending index holds pending rows only; timers lose their due-time index.
  { version: 13, statements: [...OUTBOX_PENDING_ONLY_DDL, ...TIMERS_NO_DUE_INDEX_DDL] },
  // Fewer rows written: the tables keyed by id lose their rowid (the outbox and timers are in every session).
  { version: 14, statements: [...keyedById("audit"), ...keyedById("timers")] },
  { version: 15, statements: keyedById("live_events"), table: "live_events" },
  { version: 16, statements: keyedById("run_events"), table: "run_events" },
  { version: 17, statements: keyedById("runs"), table: "runs" },
  // The history's seq needs no AUTOINCREMENT: one row fewer written a message.
  {
    version: 18,
    statements: rebuildTable(madeDirectly(THROUGH_V21), "messages", "messages_v17"),
    table: "messages",
  },
  // Fewer rows written: a flush marks the newest record it sent, not each one (a watermark).
  { version: 19, statements: OUTBOX_WATERMARK_MIGRATION },
  // Fewer rows written: live events lose their index by run (a run's replay reads on from its start).
  { version: 20, statements: [LIVE_NO_RUN_INDEX_DDL], table: "live_events" },
  // Fewer rows written: a trace event is kept once, in run_events (the live events read it there), without an index by run.
  { version: 21, statements: [RUN_EVENTS_NO_RUN_INDEX_DDL], table: "run_events" },
  // Long conversations: messages keep their token count; compactions; the memory of facts.
  { version: 22, statements: [MESSAGE_TOKENS_DDL], table: "messages" },
  { version: 23, statements: [...COMPACTIONS_DDL, ...MEMORY_DDL] },
  // A user message keeps its client's id (A2A's messageId).
  { version: 24, statements: [MESSAGE_CLIENT_ID_DDL], table: "messages" },
  // Trace exports waiting for the tenant's or the operator's collector.
  { version: 25, statements: TELEMETRY_EXPORTS_DDL },
];

/** The newest schema, made directly in one step (see SESSION_STATEMENTS). */
export const SESSION_SCHEMA: SchemaMigration = {
  version: SESSION_MIGRATIONS.at(-1)!.version,
  statements: SESSION_STATEMENTS,
};

/**
 * The tables a new session object makes at once: what every session writes when it is
 * created (its row, its audit records, its timers). Every other table of SESSION_SCHEMA is
 * made, with its indexes, by the first statement that names it (SchemaGate), so a session
 * pays for the history, handoffs, runs, inbox, live events and the rest only when it uses
 * them: making every table up front was most of what creating a session cost.
 */
export const SESSION_TABLES_DEFERRED: DeferredTables = {
  eager: ["session", "audit", "timers"],
  // The handoff tables are one feature's: its code takes one present, all present (HandoffStore.present).
  together: [HANDOFF_TABLES],
};

/** A stored history item: its sequence number, the item, and its tokens (null: not counted yet). */
export interface StoredMessage {
  seq: number;
  item: HistoryItem;
  tokens: number | null;
}

interface SessionRow {
  session_id: string;
  tenant: string;
  status: SessionRecord["status"];
  current_agent: string;
  handoff_stack: string;
  state: string;
  metadata: string;
  ttl_s: number;
  handoff_count: number;
  in_flight_handoff: string | null;
  /** Joined from the row of the handoff the session row names (`last_handoff_id`). */
  last_handoff_context: string | null;
  created_at: number;
  updated_at: number;
  expires_at: number;
  ended_at: number | null;
}

const parse = (json: string | null): unknown => (json === null ? null : JSON.parse(json));

export class SessionStore {
  /**
   * The session row as this instance last read or wrote it (undefined: unknown). Only
   * `save` writes it; a transaction that rolls back, and a wipe, must call `forget`.
   * Records are immutable values (every change makes a new one), so callers share it.
   */
  private cached: SessionRecord | null | undefined = undefined;
  /** The agents' turn status and the history's length, kept the same way (undefined: unknown). */
  private statuses: Record<string, AgentTurnStatus> | undefined = undefined;
  private length: number | undefined = undefined;

  constructor(
    private readonly sql: Sql,
    private readonly tables: TablesHeld = ALL_TABLES,
  ) {}

  load(): SessionRecord | null {
    if (this.cached === undefined) this.cached = this.read();
    return this.cached;
  }

  /** A new object's: no session row, no history, no agent status yet (nothing to read). */
  startEmpty(): void {
    this.cached = null;
    this.statuses = {};
    this.length = 0;
  }

  /** After a rolled-back transaction or a wipe: the next load reads the row. */
  forget(): void {
    this.cached = undefined;
    this.statuses = undefined;
    this.length = undefined;
  }

  private read(): SessionRecord | null {
    // Before its first handoff a session may not hold the handoffs table, and names no handoff.
    const row = this.tables.has("handoffs")
      ? this.sql<
          SessionRow & { format: number }
        >`SELECT s.*, json_extract(h.record, '$.context') AS last_handoff_context
          FROM session AS s LEFT JOIN handoffs AS h ON h.id = s.last_handoff_id WHERE s.id = 1`[0]
      : this.sql<SessionRow & { format: number }>`SELECT *, NULL AS last_handoff_context FROM session WHERE id = 1`[0];
    if (!row) return null;
    if (row.format !== SESSION_FORMAT) throw new Error(`session row format ${row.format} is not ${SESSION_FORMAT}`);
    return SessionRecord.parse({
      id: row.session_id,
      tenant: row.tenant,
      status: row.status,
      current_agent: row.current_agent,
      handoff_stack: parse(row.handoff_stack),
      state: parse(row.state),
      metadata: parse(row.metadata),
      ttl_s: row.ttl_s,
      handoff_count: row.handoff_count,
      in_flight_handoff: parse(row.in_flight_handoff),
      last_handoff_context: parse(row.last_handoff_context),
      created_at: row.created_at,
      updated_at: row.updated_at,
      expires_at: row.expires_at,
      ended_at: row.ended_at,
    });
  }

  save(s: SessionRecord): void {
    this.cached = undefined;
    const json = (value: unknown) => (value === null ? null : JSON.stringify(value));
    this
      .sql`INSERT OR REPLACE INTO session (id, session_id, tenant, status, current_agent, handoff_stack, state, metadata,
               ttl_s, handoff_count, in_flight_handoff, last_handoff_id, created_at, updated_at, expires_at, ended_at)
             VALUES (1, ${s.id}, ${s.tenant}, ${s.status}, ${s.current_agent}, ${JSON.stringify(s.handoff_stack)},
               ${JSON.stringify(s.state)}, ${JSON.stringify(s.metadata)}, ${s.ttl_s}, ${s.handoff_count},
               ${json(s.in_flight_handoff)}, ${s.last_handoff_context?.metadata.handoff_id ?? null}, ${s.created_at},
               ${s.updated_at}, ${s.expires_at}, ${s.ended_at})`;
    this.cached = s;
  }

  /**
   * Appends one history item, with its tokens when known and the id its client gave it (a user
   * message's A2A `messageId`); returns its sequence number (1-based, gap-free per session).
   */
  appendMessage(
    item: HistoryItem & { id: string },
    now: number,
    tokens: number | null = null,
    clientId: string | null = null,
  ): number {
    const row = this.sql<{ seq: number }>`INSERT INTO messages (id, role, agent, item, created_at, tokens, client_id)
      VALUES (${item.id}, ${item.role}, ${item.agent ?? null}, ${JSON.stringify(item)}, ${now}, ${tokens}, ${clientId})
      RETURNING seq`[0];
    if (!row) throw new Error("message insert returned no row");
    if (this.length !== undefined) this.length += 1;
    return row.seq;
  }

  /** Whether a message with this id is stored. */
  hasMessage(id: string): boolean {
    return this.tables.has("messages") && this.sql`SELECT 1 FROM messages WHERE id = ${id}`.length > 0;
  }

  historyLength(): number {
    if (this.length === undefined)
      this.length = this.tables.has("messages")
        ? (this.sql<{ n: number }>`SELECT COUNT(*) AS n FROM messages`[0]?.n ?? 0)
        : 0;
    return this.length;
  }

  /**
   * History items in order, after sequence `after` (exclusive), each with its tokens (null: not
   * counted yet, docs/memory.md); all of them without a limit.
   */
  history({ after = 0, limit = -1 }: { after?: number; limit?: number } = {}): StoredMessage[] {
    if (!this.tables.has("messages")) return [];
    return this.sql<{
      seq: number;
      item: string;
      tokens: number | null;
    }>`SELECT seq, item, tokens FROM messages WHERE seq > ${after} ORDER BY seq LIMIT ${limit}`.map((row) => ({
      seq: row.seq,
      item: JSON.parse(row.item) as HistoryItem,
      tokens: row.tokens,
    }));
  }

  /** One message by the tool call it answers (the latest, if several), or undefined. */
  toolOutput(callId: string): HistoryItem | undefined {
    if (!this.tables.has("messages")) return undefined;
    const row = this.sql<{ item: string }>`SELECT item FROM messages
      WHERE role = 'tool' AND json_extract(item, '$.tool_call_id') = ${callId} ORDER BY seq DESC LIMIT 1`[0];
    return row ? (JSON.parse(row.item) as HistoryItem) : undefined;
  }

  /** Records counted tokens of messages stored without them (inside the caller's transaction). */
  setTokens(counts: ReadonlyMap<number, number>): void {
    for (const [seq, tokens] of counts)
      this.sql`UPDATE messages SET tokens = ${tokens} WHERE seq = ${seq} AND tokens IS NULL`;
  }

  /**
   * History items added from `fromMs` to `toMs` (milliseconds, inclusive), in order, at most
   * `limit`, each with the id its client gave it, if any.
   */
  historyBetween(fromMs: number, toMs: number, limit: number): TaskItem[] {
    return this.sql<{ item: string; client_id: string | null }>`SELECT item, client_id FROM messages
      WHERE created_at >= ${fromMs} AND created_at <= ${toMs} ORDER BY seq LIMIT ${limit}`.map((row) => {
      const item = JSON.parse(row.item) as HistoryItem;
      return row.client_id === null ? item : { ...item, client_message_id: row.client_id };
    });
  }

  /** A copy: callers may keep it across later changes. */
  agentStatus(): Record<string, AgentTurnStatus> {
    if (this.statuses === undefined) {
      const read: Record<string, AgentTurnStatus> = {};
      const rows = this.tables.has("agent_status")
        ? this.sql<{
            agent: string;
            status: AgentTurnStatus;
          }>`SELECT agent, status FROM agent_status ORDER BY agent`
        : [];
      for (const row of rows) read[row.agent] = row.status;
      this.statuses = read;
    }
    return { ...this.statuses };
  }

  /** A status change is rare beside the reads: the next read takes the table again. */
  setAgentStatus(agent: string, status: AgentTurnStatus, now: number): void {
    this.statuses = undefined;
    this.sql`INSERT INTO agent_status (agent, status, updated_at) VALUES (${agent}, ${status}, ${now})
             ON CONFLICT (agent) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at`;
  }
}
