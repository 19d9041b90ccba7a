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
