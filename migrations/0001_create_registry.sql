-- Agent registry, per tenant. The definition is the validated AgentDefinition as JSON.
CREATE TABLE IF NOT EXISTS agents (
  tenant      TEXT NOT NULL,
  name        TEXT NOT NULL,
  definition  TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  PRIMARY KEY (tenant, name)
);

-- Bumped on every registry write; isolates recompile the router when it moves. The stamp
-- is random per write, so a compiled router is never mistaken for another database's
-- registry at the same version number (a restored backup, a fresh local state).
CREATE TABLE IF NOT EXISTS registry_versions (
  tenant   TEXT PRIMARY KEY,
  version  INTEGER NOT NULL,
  stamp    TEXT NOT NULL
);

-- The tenant layer of routing configuration (a RoutingConfigPatch as JSON).
CREATE TABLE IF NOT EXISTS routing_config (
  tenant      TEXT PRIMARY KEY,
  config      TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
