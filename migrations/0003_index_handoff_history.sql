-- The handoffs history index is a projection of the handoff audit records, upserted in the
-- same D1 batch as them. `last_audit_id` is the id of the record a row reflects: an upsert
-- only applies when its record is newer, so replays and retries never move a row backwards.
ALTER TABLE handoffs ADD COLUMN last_audit_id TEXT NOT NULL DEFAULT '';

-- GET /v1/agents/:name/handoffs pages newest first by id (a ULID prefix) per agent and role.
CREATE INDEX IF NOT EXISTS handoffs_source_id ON handoffs (tenant, source_agent, id);
CREATE INDEX IF NOT EXISTS handoffs_target_id ON handoffs (tenant, target_agent, id);
