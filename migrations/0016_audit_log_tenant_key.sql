-- audit_log keyed by (tenant, id), as every query reads it: the table is its own tenant index, so
-- audit_log_tenant goes (a fifth of a record's index bytes). `at` is kept only when it is not the
-- id's own time (a ULID of the moment the record was made): NULL otherwise, and readers derive it
-- (src/audit/stored-record.ts). Each shard applies this, like every migration.
CREATE TABLE audit_log_v4 (
  tenant      TEXT NOT NULL,
  id          TEXT NOT NULL,
  at          TEXT,
  session_id  TEXT,
  handoff_id  TEXT,
  action      TEXT NOT NULL,
  agent       TEXT,
  actor       TEXT NOT NULL,
  actor_type  TEXT NOT NULL CHECK (actor_type IN ('user', 'agent', 'system', 'webhook', 'trigger')),
  details     TEXT NOT NULL DEFAULT '{}',
  PRIMARY KEY (tenant, id)
) WITHOUT ROWID;
INSERT INTO audit_log_v4 SELECT tenant, id, at, session_id, handoff_id, action, agent, actor, actor_type, details FROM audit_log;
DROP TABLE audit_log;
ALTER TABLE audit_log_v4 RENAME TO audit_log;
CREATE INDEX audit_log_session ON audit_log (tenant, session_id, id) WHERE session_id IS NOT NULL;
CREATE INDEX audit_log_action ON audit_log (tenant, action, id);
CREATE INDEX audit_log_agent ON audit_log (tenant, agent, id) WHERE agent IS NOT NULL;
CREATE INDEX audit_log_actor ON audit_log (tenant, actor, id) WHERE actor_type = 'agent' AND actor IS NOT agent;
