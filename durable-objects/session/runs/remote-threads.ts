import type { RemoteThread } from "../../../src/interop/a2a-remote";
import type { Sql, TablesHeld } from "../../shared/sql";

/**
 * The session's threads with remote A2A agents (schema v12, docs/a2a.md): per agent, the
 * remote context the session's messages go to (one per session, so the agent keeps its own
 * thread), the task an input-required answer left open, and the handoff whose context it
 * was last sent. Synchronous SQL, so a write joins the caller's transaction.
 */

export const REMOTE_THREADS_DDL = [
  `CREATE TABLE remote_threads (
     agent       TEXT PRIMARY KEY,
     context_id  TEXT,
     task_id     TEXT,
     handoff_id  TEXT,
     updated_at  INTEGER NOT NULL
   )`,
] as const;

const EMPTY: RemoteThread = { context_id: null, task_id: null, handoff_id: null };

export class RemoteThreads {
  constructor(
    private readonly sql: Sql,
    private readonly tables: TablesHeld,
  ) {}

  get(agent: string): RemoteThread {
    // A session that never spoke to a remote agent has no table yet; reading must not make one.
    if (!this.tables.has("remote_threads")) return EMPTY;
    const row = this
      .sql<RemoteThread>`SELECT context_id, task_id, handoff_id FROM remote_threads WHERE agent = ${agent}`[0];
    return row ? { context_id: row.context_id, task_id: row.task_id, handoff_id: row.handoff_id } : EMPTY;
  }

  save(agent: string, thread: RemoteThread, now: number): void {
    this.sql`INSERT INTO remote_threads (agent, context_id, task_id, handoff_id, updated_at)
             VALUES (${agent}, ${thread.context_id}, ${thread.task_id}, ${thread.handoff_id}, ${now})
             ON CONFLICT (agent) DO UPDATE SET context_id = excluded.context_id, task_id = excluded.task_id,
               handoff_id = excluded.handoff_id, updated_at = excluded.updated_at`;
  }
}
