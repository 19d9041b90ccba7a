-- Handoffs started by triggers are audited with actor_type 'trigger' (docs/triggers.md). SQLite
-- cannot alter a CHECK, so audit_log is rebuilt with its rows and indexes.
CREATE TABLE audit_log_v2 (
  id          TEXT PRIMARY KEY,
  at          TEXT NOT NULL,
  tenant      TEXT NOT NULL,
  session_id  TEXT,
  handoff_id  TEXT,
  action      TEXT NOT NULL,
  agent       TEXT,
  actor       TEXT NOT NULL,
  actor_type  TEXT NOT NULL CHECK (actor_type IN ('user', 'agent', 'system', 'webhook', 'trigger')),
  details     TEXT NOT NULL DEFAULT '{}'
);
INSERT INTO audit_log_v2 SELECT id, at, tenant, session_id, handoff_id, action, agent, actor, actor_type, details FROM audit_log;
DROP TABLE audit_log;
ALTER TABLE audit_log_v2 RENAME TO audit_log;
CREATE INDEX IF NOT EXISTS audit_log_tenant ON audit_log (tenant, id);
CREATE INDEX IF NOT EXISTS audit_log_session ON audit_log (tenant, session_id, id);
CREATE INDEX IF NOT EXISTS audit_log_action ON audit_log (tenant, action, id);
CREATE INDEX IF NOT EXISTS audit_log_agent ON audit_log (tenant, agent, id);
CREATE INDEX IF NOT EXISTS audit_log_actor ON audit_log (tenant, actor, id);

-- Webhook deliveries received (docs/webhooks.md): one row per source and webhook-id, so a repeated
-- delivery returns the first result and does nothing again. `status` is 'processing' while
-- the first delivery is handled; a claim older than a minute may be taken over (its
-- handler died), and the session's own idempotency key keeps that from doubling a handoff.
CREATE TABLE IF NOT EXISTS webhook_receipts (
  tenant       TEXT NOT NULL,
  source       TEXT NOT NULL,
  webhook_id   TEXT NOT NULL,
  status       TEXT NOT NULL CHECK (status IN ('processing', 'done')),
  http_status  INTEGER,
  result       TEXT,
  claimed_at   TEXT NOT NULL,
  PRIMARY KEY (tenant, source, webhook_id)
);
