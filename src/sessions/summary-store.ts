import type { SessionSummary } from "./model";

/**
 * Expired sessions' summaries in D1. The row is also the session's tombstone: once the
 * object's storage is gone, it is what tells "expired" (410) from "never existed" (404).
 */

/** Idempotent: a retried expiry writes nothing new. */
export async function writeSessionSummary(db: D1Database, s: SessionSummary): Promise<void> {
  await db
    .prepare(
      `INSERT INTO session_summaries
         (tenant, session_id, created_at, expired_at, current_agent, history_length, handoff_count, summary)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
       ON CONFLICT (tenant, session_id) DO NOTHING`,
    )
    .bind(
      s.tenant,
      s.session_id,
      s.created_at,
      s.expired_at,
      s.current_agent,
      s.history_length,
      s.handoff_count,
      JSON.stringify(s.summary),
    )
    .run();
}

/** When the tenant's session expired, or null when D1 has no summary of it. */
export async function findExpiry(db: D1Database, tenant: string, sessionId: string): Promise<string | null> {
  const row = await db
    .prepare("SELECT expired_at FROM session_summaries WHERE tenant = ?1 AND session_id = ?2")
    .bind(tenant, sessionId)
    .first<{ expired_at: string }>();
  return row?.expired_at ?? null;
}
