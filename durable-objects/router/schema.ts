import { createSql, SchemaGate, type SchemaMigration, type Sql } from "../shared/sql";

/**
 * The router object's tables, version by version: its built shards' sections and the version
 * they make up (shard-store.ts), then the tenant's routing history (route-history.ts).
 */

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
