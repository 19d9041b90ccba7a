-- Relay as an MCP server (docs/mcp-server.md): the tenant's settings for `/mcp`. `expose` is a
-- JSON list of agent names an MCP client is offered (NULL: every agent). `format` is the row's
-- version (src/registry/mcp-config-store.ts parses it on read).
CREATE TABLE IF NOT EXISTS mcp_config (
  tenant      TEXT PRIMARY KEY,
  format      INTEGER NOT NULL CHECK (format = 1),
  expose      TEXT,
  updated_at  TEXT NOT NULL
);
