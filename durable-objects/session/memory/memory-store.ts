/**
 * The session's memory of facts (schema v22, docs/memory.md, Facts): short keyed values its
 * agents write with `remember` and `forget`, and people through the API, placed in every
 * agent's prompt.
 */
export const MEMORY_DDL = [
  `CREATE TABLE memory (
     key         TEXT PRIMARY KEY,
     value       TEXT NOT NULL,
     agent       TEXT,
     updated_at  INTEGER NOT NULL
   ) WITHOUT ROWID`,
] as const;
