import { Compaction } from "../../../src/schemas/memory";
import { ALL_TABLES, type Sql, type TablesHeld } from "../../shared/sql";

/**
 * The session's compactions (schema v22, docs/memory.md, Compaction): per agent view, what
 * replaces the start of the view in what the model sees. Each is written whole in the
 * transaction of the step that made it, so a view is the old one or the new one, never half.
 */
export const COMPACTIONS_DDL = [
  `CREATE TABLE compactions (
     id          TEXT PRIMARY KEY,
     view_key    TEXT NOT NULL,
     record      TEXT NOT NULL
   ) WITHOUT ROWID`,
] as const;

/** v22: each message keeps its token count (null until counted: docs/memory.md, Token accounting). */
export const MESSAGE_TOKENS_DDL = "ALTER TABLE messages ADD COLUMN tokens INTEGER";

/** The key of one agent's view: the agent, and the handoff whose context starts it (none: the whole history). */
export function viewKey(agent: string, handoffId: string | null): string {
  return `${agent}:${handoffId ?? ""}`;
}

export class CompactionStore {
  constructor(
    private readonly sql: Sql,
    private readonly tables: TablesHeld = ALL_TABLES,
  ) {}

  /** The newest compaction of a view, or null. */
  latest(agent: string, handoffId: string | null): Compaction | null {
    if (!this.tables.has("compactions")) return null;
    const row = this.sql<{ record: string }>`SELECT record FROM compactions
      WHERE view_key = ${viewKey(agent, handoffId)} ORDER BY id DESC LIMIT 1`[0];
    return row ? Compaction.parse(JSON.parse(row.record)) : null;
  }

  /** The session's compactions, oldest first. */
  list(): Compaction[] {
    if (!this.tables.has("compactions")) return [];
    return this.sql<{ record: string }>`SELECT record FROM compactions ORDER BY id`.map((row) =>
      Compaction.parse(JSON.parse(row.record)),
    );
  }

  /** Inside the caller's transaction. */
  insert(compaction: Compaction): void {
    this.sql`INSERT INTO compactions (id, view_key, record)
      VALUES (${compaction.id}, ${viewKey(compaction.agent, compaction.view)}, ${JSON.stringify(compaction)})`;
  }
}
