import { AGENT_STATUSES } from "../../src/rpc/agent";
import { foldSchemaChanges, rebuildTable, withoutRowid } from "../shared/schema-text";
import type { SchemaMigration } from "../shared/sql";
import { TIMERS_DDL, TIMERS_FORMAT_DDL, TIMERS_NO_DUE_INDEX_DDL } from "../shared/timers";
import { WAITS_DDL } from "./agent-waits";

/** An agent object's schema: its migrations, and the newest schema a new agent makes in one step. */

/** Agent v1: the agent's row and its leases. */
const AGENT_V1_DDL = [
  `CREATE TABLE agent (
     id                       INTEGER PRIMARY KEY CHECK (id = 1),
     status                   TEXT NOT NULL CHECK (status IN (${AGENT_STATUSES.map((st) => `'${st}'`).join(", ")})),
     max_concurrent_sessions  INTEGER CHECK (max_concurrent_sessions IS NULL OR max_concurrent_sessions > 0),
     fencing_counter          INTEGER NOT NULL DEFAULT 0,
     updated_at               INTEGER NOT NULL
   )`,
  `CREATE TABLE leases (
     lease_id       TEXT PRIMARY KEY,
     session_id     TEXT NOT NULL UNIQUE,
     handoff_id     TEXT NOT NULL,
     state          TEXT NOT NULL CHECK (state IN ('tentative', 'held')),
     fencing_token  INTEGER NOT NULL,
     created_at     INTEGER NOT NULL,
     expires_at     INTEGER,
     CHECK ((state = 'tentative') = (expires_at IS NOT NULL))
   )`,
] as const;

/** The tables an agent writes with every lease (taken, confirmed, released, lapsed): v4 makes them `WITHOUT ROWID`. */
const KEYED_BY_ID = ["leases", "timers", "waits"] as const;

/**
 * The newest schema's statements, what AGENT_MIGRATIONS leave, made directly: columns added
 * by ALTER written into their CREATE TABLE, the dropped index left out, the tables keyed by
 * id made without a rowid (see `withoutRowid`).
 */
const AGENT_STATEMENTS = withoutRowid(
  foldSchemaChanges([...AGENT_V1_DDL, ...TIMERS_DDL, ...TIMERS_FORMAT_DDL, ...WAITS_DDL, ...TIMERS_NO_DUE_INDEX_DDL]),
  KEYED_BY_ID,
);

/** A table keyed by id made again without a rowid, its rows kept. */
const keyedById = (table: (typeof KEYED_BY_ID)[number]) => rebuildTable(AGENT_STATEMENTS, table, `${table}_v3`);

export const AGENT_MIGRATIONS: readonly SchemaMigration[] = [
  { version: 1, statements: [...AGENT_V1_DDL, ...TIMERS_DDL] },
  { version: 2, statements: TIMERS_FORMAT_DDL },
  // The agent's waits on other agents and people (collaboration, deadlock probes).
  { version: 3, statements: WAITS_DDL },
  // Fewer rows written per lease: the tables keyed by id made again without a rowid (timers
  // without their due-time index, dropped with the old table).
  { version: 4, statements: [...keyedById("leases"), ...keyedById("timers"), ...keyedById("waits")] },
];

/** The newest schema, made directly in one step by a new agent object. */
export const AGENT_SCHEMA: SchemaMigration = {
  version: AGENT_MIGRATIONS.at(-1)!.version,
  statements: AGENT_STATEMENTS,
};
