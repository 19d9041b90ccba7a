-- Webhook deliveries refused before they authenticated (unknown source, too large, unsigned,
-- badly signed, stale): counted per tenant, source and reason rather than each recorded, so
-- a flood costs one aggregate write per isolate per second, not a write per request.
-- Unknown sources share one bucket (source '_unknown' under tenant '_webhooks').
CREATE TABLE IF NOT EXISTS webhook_rejections (
  tenant    TEXT NOT NULL,
  source    TEXT NOT NULL,
  reason    TEXT NOT NULL,
  count     INTEGER NOT NULL CHECK (count >= 0),
  first_at  TEXT NOT NULL,
  last_at   TEXT NOT NULL,
  PRIMARY KEY (tenant, source, reason)
);

-- Per source, the newest minute (since the epoch) that has its one `webhook.rejected`
-- sample in audit_log: the sample is written only when its minute is newer.
CREATE TABLE IF NOT EXISTS webhook_rejection_samples (
  tenant  TEXT NOT NULL,
  source  TEXT NOT NULL,
  minute  INTEGER NOT NULL,
  PRIMARY KEY (tenant, source)
);
