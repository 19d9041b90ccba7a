-- Sessions index for GET /v1/sessions: one row per session, a projection of the session's
-- audit records written in the same D1 batch as them (src/audit/session-index.ts), so it
-- is as durable as the audit log and as current as the last outbox flush.
-- `agent_audit_id` and `status_audit_id` are the ids of the records that set
-- `current_agent` and `status`: an older record never overwrites a newer one, so a replayed
-- or reordered batch leaves the row as it was. The counts only add records that were not
-- yet in audit_log when their batch ran, so a replay adds nothing.
CREATE TABLE IF NOT EXISTS sessions (
  tenant           TEXT NOT NULL,
  id               TEXT NOT NULL,
  status           TEXT NOT NULL CHECK (status IN ('active', 'expired', 'deleted')),
  initial_agent    TEXT,
  current_agent    TEXT NOT NULL,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  ended_at         TEXT,
  message_count    INTEGER NOT NULL DEFAULT 0 CHECK (message_count >= 0),
  handoff_count    INTEGER NOT NULL DEFAULT 0 CHECK (handoff_count >= 0),
  agent_audit_id   TEXT NOT NULL DEFAULT '',
  status_audit_id  TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (tenant, id)
);

-- Session ids start with a ULID, so id order is creation order: pages go newest first by
-- id, over all sessions (the primary key) or one status or one current agent.
CREATE INDEX IF NOT EXISTS sessions_status ON sessions (tenant, status, id);
CREATE INDEX IF NOT EXISTS sessions_agent ON sessions (tenant, current_agent, id);
