import { MemoryFact } from "../../../src/schemas/memory";
import type { Sql, TablesHeld } from "../../shared/sql";

/**
 * The session's memory of facts (schema v23, docs/memory.md, Facts): short keyed values its
 * agents write with `remember` and `forget`, and people through the API, placed in every
 * agent's prompt. Synchronous SQL, so a write joins the caller's transaction; rows are parsed
 * with their schema on read. The bounds are src/memory/facts.ts's to check before a write.
 */
export const MEMORY_DDL = [
  `CREATE TABLE memory (
     key         TEXT PRIMARY KEY,
     value       TEXT NOT NULL,
     agent       TEXT,
     updated_at  INTEGER NOT NULL
   ) WITHOUT ROWID`,
] as const;

interface MemoryRow {
  key: string;
  value: string;
  agent: string | null;
  updated_at: number;
}

export class MemoryStore {
  constructor(
    private readonly sql: Sql,
    /** A session whose memory was never written holds no table: reads answer "none" without making it. */
    private readonly tables: TablesHeld,
  ) {}

  /** Every fact, by key. */
  list(): MemoryFact[] {
    if (!this.tables.has("memory")) return [];
    return this.sql<MemoryRow>`SELECT key, value, agent, updated_at FROM memory ORDER BY key`.map((row) =>
      MemoryFact.parse({ ...row, updated_at: new Date(row.updated_at).toISOString() }),
    );
  }

  /** Writes `fact`, replacing any of its key, as of `now` (the row keeps the time in ms). */
  put(fact: Pick<MemoryFact, "key" | "value" | "agent">, now: number): void {
    this
      .sql`INSERT INTO memory (key, value, agent, updated_at) VALUES (${fact.key}, ${fact.value}, ${fact.agent}, ${now})
             ON CONFLICT (key) DO UPDATE SET value = excluded.value, agent = excluded.agent, updated_at = excluded.updated_at`;
  }

  /** Deletes `key`; false when the memory did not hold it. */
  remove(key: string): boolean {
    if (!this.tables.has("memory")) return false;
    return this.sql<{ key: string }>`DELETE FROM memory WHERE key = ${key} RETURNING key`.length > 0;
  }
}
