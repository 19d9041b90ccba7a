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

-- Backfill from the audit log already in D1, by the same rules as the projection (latest
-- ending, latest agent-setting record, min/max time, counts), so sessions created before
-- this migration are listed too; their later batches then add only records not yet here.
INSERT INTO sessions (tenant, id, status, initial_agent, current_agent, created_at, updated_at, ended_at,
                      message_count, handoff_count, agent_audit_id, status_audit_id)
SELECT s.tenant, s.session_id,
  COALESCE(
    (SELECT CASE e.action WHEN 'session.expired' THEN 'expired' ELSE 'deleted' END FROM audit_log AS e
     WHERE e.tenant = s.tenant AND e.session_id = s.session_id AND e.action IN ('session.expired', 'session.deleted')
     ORDER BY e.id DESC LIMIT 1),
    'active'),
  (SELECT COALESCE(NULLIF(CASE WHEN json_type(c.details, '$.agent') = 'text' THEN json_extract(c.details, '$.agent') END, ''), c.agent)
   FROM audit_log AS c
   WHERE c.tenant = s.tenant AND c.session_id = s.session_id AND c.action = 'session.created'
   ORDER BY c.id LIMIT 1),
  COALESCE(
    (SELECT CASE h.action
              WHEN 'handoff.completed' THEN json_extract(h.details, '$.target')
              ELSE COALESCE(NULLIF(CASE WHEN json_type(h.details, '$.agent') = 'text' THEN json_extract(h.details, '$.agent') END, ''), h.agent)
            END
     FROM audit_log AS h
     WHERE h.tenant = s.tenant AND h.session_id = s.session_id
       AND (h.action = 'session.created'
            OR (h.action = 'handoff.completed' AND json_type(h.details, '$.target') = 'text' AND json_extract(h.details, '$.target') <> ''))
     ORDER BY h.id DESC LIMIT 1),
    (SELECT f.agent FROM audit_log AS f WHERE f.tenant = s.tenant AND f.session_id = s.session_id ORDER BY f.id LIMIT 1),
    ''),
  s.created_at,
  s.updated_at,
  (SELECT e.at FROM audit_log AS e
   WHERE e.tenant = s.tenant AND e.session_id = s.session_id AND e.action IN ('session.expired', 'session.deleted')
   ORDER BY e.id DESC LIMIT 1),
  s.message_count,
  s.handoff_count,
  COALESCE(
    (SELECT h.id FROM audit_log AS h
     WHERE h.tenant = s.tenant AND h.session_id = s.session_id
       AND (h.action = 'session.created'
            OR (h.action = 'handoff.completed' AND json_type(h.details, '$.target') = 'text' AND json_extract(h.details, '$.target') <> ''))
     ORDER BY h.id DESC LIMIT 1),
    ''),
  COALESCE(
    (SELECT e.id FROM audit_log AS e
     WHERE e.tenant = s.tenant AND e.session_id = s.session_id AND e.action IN ('session.expired', 'session.deleted')
     ORDER BY e.id DESC LIMIT 1),
    '')
FROM (SELECT tenant, session_id, MIN(at) AS created_at, MAX(at) AS updated_at,
             SUM(action = 'session.message_added') AS message_count,
             SUM(action = 'handoff.completed') AS handoff_count
      FROM audit_log WHERE session_id IS NOT NULL GROUP BY tenant, session_id) AS s
WHERE true
ON CONFLICT (tenant, id) DO NOTHING;
