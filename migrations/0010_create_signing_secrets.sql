-- The tenant's signing secret (src/registry/signing-secrets.ts): Relay signs every delivery
-- to a webhook agent or http tool with it (Standard Webhooks) unless the operator set that
-- agent's or tool's own secret, or its definition says `signing: none`. Made by Relay the
-- first time it is needed. A rotation keeps the previous secret signing beside the new one
-- until previous_expires_at, so receivers can switch without missing a delivery.
CREATE TABLE IF NOT EXISTS signing_secrets (
  tenant               TEXT PRIMARY KEY,
  secret               TEXT NOT NULL,
  previous_secret      TEXT,
  previous_expires_at  TEXT,
  created_at           TEXT NOT NULL,
  rotated_at           TEXT
);
