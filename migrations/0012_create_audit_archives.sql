-- The audit archive's manifest (src/audit/archive.ts): one row per tenant and day whose audit
-- records moved to R2 (object `audit/<tenant>/<day>.ndjson`), written once the object is read
-- back whole and before the day's records leave audit_log. GET /v1/audit reports it.
CREATE TABLE IF NOT EXISTS audit_archives (
  tenant       TEXT NOT NULL,
  -- The UTC day of the records' ids (YYYY-MM-DD).
  day          TEXT NOT NULL,
  object_key   TEXT NOT NULL,
  records      INTEGER NOT NULL CHECK (records >= 0),
  bytes        INTEGER NOT NULL CHECK (bytes >= 0),
  archived_at  TEXT NOT NULL,
  PRIMARY KEY (tenant, day)
);
