import type { SigningSecret } from "../schemas/signing";

/**
 * A tenant's signing secret in D1 (migration 0010): what Relay signs deliveries to webhook
 * agents and http tools with when their definition names no `signing_secret` of the vault. Made by Relay the
 * first time it is needed; a rotation keeps the previous one signing until its expiry.
 */

interface Row {
  secret: string;
  previous_secret: string | null;
  previous_expires_at: string | null;
  created_at: string;
  rotated_at: string | null;
}

const COLUMNS = "secret, previous_secret, previous_expires_at, created_at, rotated_at";

/** A fresh Standard Webhooks secret: `whsec_` + 32 random bytes in base64. */
export function newSigningSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

/** The row as shown: a replaced secret whose grace has ended at `now` is gone. */
const toSecret = (row: Row, now: Date): SigningSecret => ({
  secret: row.secret,
  previous:
    row.previous_secret !== null &&
    row.previous_expires_at !== null &&
    Date.parse(row.previous_expires_at) > now.getTime()
      ? { secret: row.previous_secret, expires_at: row.previous_expires_at }
      : null,
  created_at: row.created_at,
  rotated_at: row.rotated_at,
});

const createStatement = (db: D1Database, tenant: string, secret: string, now: string) =>
  db
    .prepare(
      "INSERT INTO signing_secrets (tenant, secret, created_at) VALUES (?1, ?2, ?3) ON CONFLICT (tenant) DO NOTHING",
    )
    .bind(tenant, secret, now);

/** The tenant's signing secret, made now if it has none (concurrent first reads agree on one). */
export async function ensureSigningSecret(db: D1Database, tenant: string, now = new Date()): Promise<SigningSecret> {
  const [, read] = await db.batch<Row>([
    createStatement(db, tenant, newSigningSecret(), now.toISOString()),
    db.prepare(`SELECT ${COLUMNS} FROM signing_secrets WHERE tenant = ?1`).bind(tenant),
  ]);
  const row = read?.results[0];
  if (!row) throw new Error("signing secret upsert returned no row");
  return toSecret(row, now);
}

/**
 * Replaces the tenant's secret with a new one. The one it replaces keeps signing beside it
 * for `graceSeconds` (0: it stops at once); a secret still in its grace from an earlier
 * rotation is dropped. One D1 batch, so a concurrent rotation cannot lose a secret halfway.
 */
export async function rotateSigningSecret(
  db: D1Database,
  tenant: string,
  graceSeconds: number,
  now = new Date(),
): Promise<SigningSecret> {
  const at = now.toISOString();
  const expires = graceSeconds > 0 ? new Date(now.getTime() + graceSeconds * 1000).toISOString() : null;
  const made = newSigningSecret();
  const [, rotated] = await db.batch<Row>([
    createStatement(db, tenant, made, at),
    db
      .prepare(
        // A secret made by this very batch (?5) was never shown to anyone: nothing to keep.
        `UPDATE signing_secrets SET
           previous_secret = CASE WHEN ?3 IS NULL OR secret = ?5 THEN NULL ELSE secret END,
           previous_expires_at = CASE WHEN ?3 IS NULL OR secret = ?5 THEN NULL ELSE ?3 END,
           secret = ?2, rotated_at = ?4
         WHERE tenant = ?1 RETURNING ${COLUMNS}`,
      )
      .bind(tenant, newSigningSecret(), expires, at, made),
  ]);
  const row = rotated?.results[0];
  if (!row) throw new Error("signing secret rotation returned no row");
  return toSecret(row, now);
}

/**
 * The secrets that sign a delivery at `nowMs`: the current one first, then the previous one
 * while its grace lasts (Standard Webhooks lets a delivery carry several signatures).
 */
export function activeSecrets(secret: SigningSecret, nowMs: number): string[] {
  const previous = secret.previous;
  return previous && Date.parse(previous.expires_at) > nowMs ? [secret.secret, previous.secret] : [secret.secret];
}
