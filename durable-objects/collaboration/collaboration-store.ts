import { CollabMessage, Collaboration } from "../../src/schemas/collaboration";
import {
  OUTBOX_DDL,
  OUTBOX_PENDING_ONLY_DDL,
  OUTBOX_WATERMARK_DDL,
  OUTBOX_WATERMARK_MIGRATION,
} from "../shared/outbox";
import { foldSchemaChanges, rebuildTable, withoutAutoincrement, withoutRowid } from "../shared/schema-text";
import type { SchemaGate, SchemaMigration, Sql } from "../shared/sql";
import { TIMERS_DDL, TIMERS_NO_DUE_INDEX_DDL } from "../shared/timers";

/** A collaboration's rows: its record (one row) and its message log in order, each parsed on read. */

const FORMAT = 1;

/** Collaboration v1: its record and its message log. */
const COLLABORATION_V1_DDL = [
  `CREATE TABLE collaboration (id INTEGER PRIMARY KEY CHECK (id = 1), tenant TEXT NOT NULL, record TEXT NOT NULL, format INTEGER NOT NULL DEFAULT ${FORMAT})`,
  `CREATE TABLE messages (
     seq         INTEGER PRIMARY KEY AUTOINCREMENT,
     id          TEXT NOT NULL UNIQUE,
     record      TEXT NOT NULL,
     format      INTEGER NOT NULL DEFAULT ${FORMAT}
   )`,
] as const;

/** The tables keyed by a text id that every message writes (its audit rows, its timers): v2 makes them `WITHOUT ROWID`. */
const KEYED_BY_ID = ["audit", "timers"] as const;

/**
 * The newest schema's statements, what COLLABORATION_MIGRATIONS leave, made directly: the
 * outbox's pending index on pending rows only, no due-time index on timers, the tables keyed
 * by id without a rowid, and the message log without AUTOINCREMENT (a message is never
 * deleted alone: the log goes with the whole object).
 */
const COLLABORATION_STATEMENTS = withoutAutoincrement(
  withoutRowid(
    foldSchemaChanges([
      ...COLLABORATION_V1_DDL,
      ...OUTBOX_DDL,
      ...TIMERS_DDL,
      ...OUTBOX_PENDING_ONLY_DDL,
      ...TIMERS_NO_DUE_INDEX_DDL,
      ...OUTBOX_WATERMARK_DDL,
    ]),
    KEYED_BY_ID,
  ),
  ["messages"],
);

/** A table made again as COLLABORATION_STATEMENTS has it, its rows kept. */
const rebuilt = (table: "audit" | "timers" | "messages") =>
  rebuildTable(COLLABORATION_STATEMENTS, table, `${table}_v1`);

export const COLLABORATION_MIGRATIONS: readonly SchemaMigration[] = [
  { version: 1, statements: [...COLLABORATION_V1_DDL, ...OUTBOX_DDL, ...TIMERS_DDL] },
  // Fewer rows written per message: each table made again as it is now, its old indexes dropped with it.
  { version: 2, statements: [...rebuilt("audit"), ...rebuilt("timers"), ...rebuilt("messages")] },
  // Fewer rows written: a flush marks the newest record it sent, not each one (a watermark).
  { version: 3, statements: OUTBOX_WATERMARK_MIGRATION },
];

/** The newest schema, made directly in one step by a new collaboration object. */
export const COLLABORATION_SCHEMA: SchemaMigration = {
  version: COLLABORATION_MIGRATIONS.at(-1)!.version,
  statements: COLLABORATION_STATEMENTS,
};

/** The collaboration without its messages, as its row keeps it. */
export type Stored = Omit<Collaboration, "messages">;

export class CollaborationStore {
  constructor(
    private readonly sql: Sql,
    private readonly schema: Pick<SchemaGate, "ready">,
  ) {}

  load(): { tenant: string; record: Stored } | null {
    if (!this.schema.ready()) return null;
    const row = this.sql<{
      tenant: string;
      record: string;
      format: number;
    }>`SELECT tenant, record, format FROM collaboration WHERE id = 1`[0];
    if (!row) return null;
    if (row.format !== FORMAT) throw new Error(`collaboration format ${row.format} is not ${FORMAT}`);
    const { messages: _messages, ...record } = Collaboration.parse({ ...JSON.parse(row.record), messages: [] });
    return { tenant: row.tenant, record };
  }

  saveRecord(record: Stored): void {
    this.sql`UPDATE collaboration SET record = ${JSON.stringify(record)} WHERE id = 1`;
  }

  insert(message: CollabMessage): number {
    const seq = this.sql<{
      seq: number;
    }>`INSERT INTO messages (id, record) VALUES (${message.id}, ${JSON.stringify(message)}) RETURNING seq`[0]!.seq;
    this.update({ ...message, seq });
    return seq;
  }

  update(message: CollabMessage): void {
    this.sql`UPDATE messages SET record = ${JSON.stringify(message)} WHERE id = ${message.id}`;
  }

  message(id: string): CollabMessage | null {
    const row = this.sql<{ record: string }>`SELECT record FROM messages WHERE id = ${id}`[0];
    return row ? CollabMessage.parse(JSON.parse(row.record)) : null;
  }

  messages(): CollabMessage[] {
    return this.sql<{ record: string }>`SELECT record FROM messages ORDER BY seq`.map((r) =>
      CollabMessage.parse(JSON.parse(r.record)),
    );
  }

  view(record: Stored): Collaboration {
    return { ...record, messages: this.messages() };
  }

  /** Inside the caller's transaction. */
  create(tenant: string, record: Stored): void {
    this.sql`INSERT INTO collaboration (id, tenant, record) VALUES (1, ${tenant}, ${JSON.stringify(record)})`;
  }
}
