-- Trace export (docs/observability.md, Export): the tenant's OTLP endpoint, the vault secrets
-- its headers take their values from (JSON `{ header: secret name }`), its sample ratio and
-- content capture. `format` is the row's version (src/registry/telemetry-config-store.ts parses
-- it on read). `telemetry_stats` counts what its exports did, kept when the settings go.
CREATE TABLE IF NOT EXISTS telemetry_config (
  tenant           TEXT PRIMARY KEY,
  format           INTEGER NOT NULL CHECK (format = 1),
  endpoint         TEXT NOT NULL,
  headers          TEXT NOT NULL,
  sample_ratio     REAL NOT NULL CHECK (sample_ratio >= 0 AND sample_ratio <= 1),
  capture_content  INTEGER NOT NULL CHECK (capture_content IN (0, 1)),
  updated_at       TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS telemetry_stats (
  tenant          TEXT PRIMARY KEY,
  exported_spans  INTEGER NOT NULL DEFAULT 0,
  dropped_spans   INTEGER NOT NULL DEFAULT 0,
  last_error      TEXT,
  last_error_at   TEXT
);
