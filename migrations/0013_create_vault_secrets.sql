-- The tenant vault (src/vault/, docs/security.md): secrets a tenant stores and its definitions
-- name. Each value is sealed (AES-256-GCM) under a data key of its own, and the data key under
-- the tenant's key-encryption key derived from a deployment key (RELAY_VAULT_KEY); key_id names
-- that deployment key, so a rotation finds the rows still sealed under the old one. `format`
-- is the row's version (src/vault/vault-store.ts parses it on read). No column holds a value in
-- the clear.
CREATE TABLE IF NOT EXISTS vault_secrets (
  tenant       TEXT NOT NULL,
  name         TEXT NOT NULL,
  format       INTEGER NOT NULL CHECK (format = 1),
  key_id       TEXT NOT NULL,
  wrapped_key  TEXT NOT NULL,
  ciphertext   TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  rotated_at   TEXT,
  PRIMARY KEY (tenant, name)
) WITHOUT ROWID;

-- The hourly rewrap reads the rows not sealed under the current key.
CREATE INDEX IF NOT EXISTS vault_secrets_key ON vault_secrets (key_id);
