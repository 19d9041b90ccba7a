import { OUTBOX_DDL, OUTBOX_WATERMARK_DDL } from "../shared/outbox";
import { foldSchemaChanges, withoutRowid } from "../shared/schema-text";
import { createSql, SchemaGate, type SchemaMigration, type Sql } from "../shared/sql";
import { TIMERS_DDL, TIMERS_NO_DUE_INDEX_DDL } from "../shared/timers";

/**
 * The router object's tables, version by version: its built shards' sections and the version
 * they make up (shard-store.ts), then the tenant's routing history (route-history.ts), then the
 * audit of its registry writes (agent-audit.ts): their intents, the audit outbox and the timers.
 */

/** A registry write under way: made before the D1 write, turned into its audit record after it. */
const AGENT_WRITES_DDL = `CREATE TABLE agent_writes (
   id       TEXT PRIMARY KEY,
   at       INTEGER NOT NULL,
   tenant   TEXT NOT NULL,
   agent    TEXT NOT NULL,
   kind     TEXT NOT NULL CHECK (kind IN ('put', 'delete')),
   existed  INTEGER NOT NULL CHECK (existed IN (0, 1)),
   changed  TEXT
 )`;

/** The kinds of a shard's sections (router_sections.kind). */
export const HEAD = 0;
export const AGENTS = 1;
export const TEXTS = 2;
export const BUCKET = 3;
/** Bytes per row at most (a row may hold 2 MB). */
export const PIECE_BYTES = 1 << 20;

export const ROUTER_MIGRATIONS: readonly SchemaMigration[] = [
  {
    version: 1,
    statements: [
      `CREATE TABLE router_sections (
         kind   INTEGER NOT NULL CHECK (kind IN (${HEAD}, ${AGENTS}, ${TEXTS}, ${BUCKET})),
         idx    INTEGER NOT NULL,
         shard  INTEGER NOT NULL,
         piece  INTEGER NOT NULL,
         data   BLOB NOT NULL,
         PRIMARY KEY (kind, idx, shard, piece)
       ) WITHOUT ROWID`,
      `CREATE TABLE router_version (id INTEGER PRIMARY KEY CHECK (id = 1), data TEXT NOT NULL)`,
    ],
  },
  {
    version: 2,
    statements: [
      // seq orders rows as they were recorded; `at` is the routing time, for since/until.
      `CREATE TABLE route_history (
         seq              INTEGER PRIMARY KEY AUTOINCREMENT,
         at               INTEGER NOT NULL,
         session_id       TEXT NOT NULL,
         input            TEXT NOT NULL,
         agent            TEXT NOT NULL,
         method           TEXT NOT NULL CHECK (method IN ('rule', 'llm', 'fallback', 'none')),
         confidence       REAL NOT NULL,
         registry_version INTEGER NOT NULL
       )`,
      "CREATE INDEX route_history_at ON route_history (at)",
      "CREATE INDEX route_history_agent ON route_history (agent, seq)",
    ],
  },
  {
    version: 3,
    // The outbox and timers as the other objects' newest schemas have them: keyed by id without
    // a rowid, a flush marking its newest record (a watermark), no due-time index.
    statements: withoutRowid(
      foldSchemaChanges([
        ...OUTBOX_DDL,
        ...OUTBOX_WATERMARK_DDL,
        ...TIMERS_DDL,
        ...TIMERS_NO_DUE_INDEX_DDL,
        AGENT_WRITES_DDL,
      ]),
      ["audit", "timers", "agent_writes"],
    ),
  },
];

/**
 * The router object's SQL and its one schema gate. One gate per object: a second one caches
 * its own view of which tables exist, and one that saw a new object empty would make the
 * tables again after the other had made them.
 */
export function routerTables(storage: DurableObjectStorage): { sql: Sql; schema: SchemaGate } {
  const sql = createSql(storage);
  return { sql, schema: new SchemaGate(storage, sql, ROUTER_MIGRATIONS) };
}
