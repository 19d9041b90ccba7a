-- Which shard holds each tenant's audit trail, lists and handoff index (docs/scaling.md, Shards),
-- and the state of a move to another shard (src/audit/shard-assignment.ts). Registry database only.
CREATE TABLE IF NOT EXISTS tenant_shards (
  tenant      TEXT PRIMARY KEY,
  shard       INTEGER NOT NULL CHECK (shard >= 0),
  phase       TEXT NOT NULL DEFAULT 'settled' CHECK (phase IN ('settled', 'copying', 'cleaning')),
  -- copying: the shard being copied to; cleaning: the shard being emptied.
  other       INTEGER CHECK (other >= 0),
  -- Where the copy or the clean-up stands: {"table": i, "after": [key values]}.
  cursor      TEXT,
  -- The phase's work waits until every isolate has seen it (ms since epoch).
  not_before  INTEGER NOT NULL DEFAULT 0,
  version     INTEGER NOT NULL DEFAULT 0,
  updated_at  TEXT NOT NULL
);

-- A deployment that had one database binds AUDIT_DB_0 to it: its tenants' data is there.
INSERT OR IGNORE INTO tenant_shards (tenant, shard, updated_at)
  SELECT tenant, 0, strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM (
    SELECT DISTINCT tenant FROM audit_log
    UNION SELECT DISTINCT tenant FROM sessions
    UNION SELECT DISTINCT tenant FROM inbox_items
  );
