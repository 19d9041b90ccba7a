-- Audit log (docs/sessions.md, The audit trail): written by the SessionDO outboxes with INSERT OR IGNORE by ULID id.
CREATE TABLE IF NOT EXISTS audit_log (
  id          TEXT PRIMARY KEY,
  at          TEXT NOT NULL,
  tenant      TEXT NOT NULL,
  session_id  TEXT,
  handoff_id  TEXT,
  action      TEXT NOT NULL,
  -- The agent the record is about (session agent, handoff target); `?agent=` also matches actor.
  agent       TEXT,
  actor       TEXT NOT NULL,
  actor_type  TEXT NOT NULL CHECK (actor_type IN ('user', 'agent', 'system', 'webhook')),
  details     TEXT NOT NULL DEFAULT '{}'
);

-- GET /v1/audit pages newest first by id within a tenant, optionally filtered.
CREATE INDEX IF NOT EXISTS audit_log_tenant ON audit_log (tenant, id);
CREATE INDEX IF NOT EXISTS audit_log_session ON audit_log (tenant, session_id, id);
CREATE INDEX IF NOT EXISTS audit_log_action ON audit_log (tenant, action, id);
CREATE INDEX IF NOT EXISTS audit_log_agent ON audit_log (tenant, agent, id);
CREATE INDEX IF NOT EXISTS audit_log_actor ON audit_log (tenant, actor, id);

-- Handoff history index: one row per handoff, kept current by the SessionDO.
CREATE TABLE IF NOT EXISTS handoffs (
  id            TEXT PRIMARY KEY,
  tenant        TEXT NOT NULL,
  session_id    TEXT NOT NULL,
  source_agent  TEXT NOT NULL,
  target_agent  TEXT,
  status        TEXT NOT NULL CHECK (status IN (
                  'initiated', 'validating', 'pending', 'transferring', 'completed',
                  'failed', 'rolled_back', 'timed_out', 'cancelled', 'escalated')),
  mode          TEXT NOT NULL CHECK (mode IN ('transfer', 'return')),
  policy        TEXT NOT NULL CHECK (policy IN ('immediate', 'graceful', 'conditional')),
  reason        TEXT NOT NULL DEFAULT '',
  created_at    TEXT NOT NULL,
  completed_at  TEXT
);

CREATE INDEX IF NOT EXISTS handoffs_source ON handoffs (tenant, source_agent, created_at, id);
CREATE INDEX IF NOT EXISTS handoffs_target ON handoffs (tenant, target_agent, created_at, id);
CREATE INDEX IF NOT EXISTS handoffs_session ON handoffs (tenant, session_id, created_at, id);

-- What remains of a session once its TTL expired and its object storage was deleted.
-- Also the tombstone the Worker reads to answer 410 SESSION_EXPIRED.
CREATE TABLE IF NOT EXISTS session_summaries (
  tenant          TEXT NOT NULL,
  session_id      TEXT NOT NULL,
  created_at      TEXT NOT NULL,
  expired_at      TEXT NOT NULL,
  current_agent   TEXT NOT NULL,
  history_length  INTEGER NOT NULL,
  handoff_count   INTEGER NOT NULL,
  summary         TEXT NOT NULL DEFAULT '{}',
  PRIMARY KEY (tenant, session_id)
);
