-- Inbox index for GET /v1/inbox: one row per inbox item, a projection of the item's audit
-- records (inbox.item_created, inbox.item_resolved|expired|cancelled) written in the same D1
-- batch as them (src/audit/inbox-index.ts). The items themselves, replies included, live in
-- their sessions' Durable Objects; this holds no message content.
-- The creation fields are null until the creation record is seen, so a close that reaches
-- D1 first (a reordered replay) is kept and completed later; such a row is not listed.
-- `status_audit_id` is the id of the record that set `status`: an older record never
-- overwrites a newer one, so a replayed batch leaves the row as it was.
CREATE TABLE IF NOT EXISTS inbox_items (
  tenant           TEXT NOT NULL,
  id               TEXT NOT NULL,
  session_id       TEXT NOT NULL,
  kind             TEXT CHECK (kind IN ('handoff_escalation', 'human_turn', 'escalation')),
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

-- Inbox ids start with a ULID, so id order is creation order: pages go oldest first by id,
-- over one status (the usual view: what is open) or one agent's items.
CREATE INDEX IF NOT EXISTS inbox_items_status ON inbox_items (tenant, status, id);
CREATE INDEX IF NOT EXISTS inbox_items_agent ON inbox_items (tenant, agent, id);
