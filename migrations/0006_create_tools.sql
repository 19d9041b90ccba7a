-- The tool registry, per tenant, beside the agents: the definition is the validated
-- ToolDefinition as JSON (src/schemas/tool.ts). Writes bump registry_versions, as agent
-- writes do, so every isolate sees agents and tools at one version.
CREATE TABLE IF NOT EXISTS tools (
  tenant      TEXT NOT NULL,
  name        TEXT NOT NULL,
  definition  TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  PRIMARY KEY (tenant, name)
);

-- The inbox index gains the `approval` kind (a tool call or handoff waiting for a person's
-- yes or no). SQLite cannot alter a CHECK, so the table is rebuilt with its rows.
CREATE TABLE inbox_items_v2 (
  tenant           TEXT NOT NULL,
  id               TEXT NOT NULL,
  session_id       TEXT NOT NULL,
  kind             TEXT CHECK (kind IN ('handoff_escalation', 'human_turn', 'escalation', 'approval')),
  status           TEXT NOT NULL CHECK (status IN ('open', 'resolved', 'expired', 'cancelled')),
  agent            TEXT,
  run_id           TEXT,
  handoff_id       TEXT,
  reason           TEXT,
  created_at       TEXT,
  expires_at       TEXT,
  closed_at        TEXT,
  resolved_by      TEXT,
  status_audit_id  TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (tenant, id)
);
INSERT INTO inbox_items_v2 SELECT tenant, id, session_id, kind, status, agent, run_id, handoff_id, reason, created_at, expires_at, closed_at, resolved_by, status_audit_id FROM inbox_items;
DROP TABLE inbox_items;
ALTER TABLE inbox_items_v2 RENAME TO inbox_items;
CREATE INDEX IF NOT EXISTS inbox_items_status ON inbox_items (tenant, status, id);
CREATE INDEX IF NOT EXISTS inbox_items_agent ON inbox_items (tenant, agent, id);
