-- Webhooks out (docs/webhooks.md): a tenant's events_url receives handoff and run lifecycle
-- notifications, Standard Webhooks-signed with the subscription's own secret (made by
-- Relay when the subscription is created, shown to the tenant, kept on replacement).
CREATE TABLE IF NOT EXISTS event_subscriptions (
  tenant      TEXT PRIMARY KEY,
  url         TEXT NOT NULL,
  types       TEXT NOT NULL DEFAULT '[]',
  secret      TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
