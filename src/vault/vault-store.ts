import * as z from "zod";
import { MAX_SECRETS_PER_TENANT } from "../schemas/vault";
import type { Sealed } from "./envelope";

/**
 * The vault's rows in D1 (migration 0013), scoped by tenant: sealed values and when they were
 * made and replaced. Rows are parsed on read by their format version; nothing here sees a
 * value in the clear.
 */

const SealedRow = z.object({
  name: z.string(),
  format: z.literal(1),
  key_id: z.string(),
  wrapped_key: z.string(),
  ciphertext: z.string(),
  created_at: z.string(),
  rotated_at: z.string().nullable(),
});
export type SealedRow = z.infer<typeof SealedRow>;

/** A secret's bookkeeping: what the API may show. */
export interface SecretMeta {
  name: string;
  created_at: string;
  rotated_at: string | null;
}

const META = "name, created_at, rotated_at";
const SEALED = "name, format, key_id, wrapped_key, ciphertext, created_at, rotated_at";

/**
 * Stores a sealed value under `name`: a new secret, or a new value for an existing one (its
 * `rotated_at` moves). Null when the tenant's vault is full and `name` is new — decided in the
 * one statement that writes, so concurrent writes cannot pass the limit together.
 */
export async function putSealed(
  db: D1Database,
  tenant: string,
  name: string,
  sealed: Sealed,
  now: string,
  limit = MAX_SECRETS_PER_TENANT,
): Promise<{ created: boolean; meta: SecretMeta } | null> {
  const row = await db
    .prepare(
      `INSERT INTO vault_secrets (tenant, name, format, key_id, wrapped_key, ciphertext, created_at, rotated_at)
       SELECT ?1, ?2, 1, ?3, ?4, ?5, ?6, NULL
       WHERE EXISTS (SELECT 1 FROM vault_secrets WHERE tenant = ?1 AND name = ?2)
          OR (SELECT COUNT(*) FROM vault_secrets WHERE tenant = ?1) < ?7
       ON CONFLICT (tenant, name) DO UPDATE SET
         format = 1, key_id = excluded.key_id, wrapped_key = excluded.wrapped_key,
         ciphertext = excluded.ciphertext, rotated_at = excluded.created_at
       RETURNING ${META}`,
    )
    .bind(tenant, name, sealed.key_id, sealed.wrapped_key, sealed.ciphertext, now, limit)
    .first<SecretMeta>();
  return row ? { created: row.rotated_at === null, meta: row } : null;
}

/** The sealed rows of the names asked for that exist, by name. */
export async function sealedRows(
  db: D1Database,
  tenant: string,
  names: readonly string[],
): Promise<Map<string, SealedRow>> {
  const unique = [...new Set(names)];
  if (unique.length === 0) return new Map();
  // A definition names a handful of secrets; D1 takes at most 100 bound parameters.
  const rows: SealedRow[] = [];
  for (let at = 0; at < unique.length; at += 90) {
    const part = unique.slice(at, at + 90);
    const { results } = await db
      .prepare(
        `SELECT ${SEALED} FROM vault_secrets WHERE tenant = ?1 AND name IN (${part.map((_, i) => `?${i + 2}`).join(", ")})`,
      )
      .bind(tenant, ...part)
      .all();
    rows.push(...results.map((row) => SealedRow.parse(row)));
  }
  return new Map(rows.map((row) => [row.name, row]));
}

/** One secret's bookkeeping, or null. */
export function secretMeta(db: D1Database, tenant: string, name: string): Promise<SecretMeta | null> {
  return db
    .prepare(`SELECT ${META} FROM vault_secrets WHERE tenant = ?1 AND name = ?2`)
    .bind(tenant, name)
    .first<SecretMeta>();
}

/** One page of the tenant's secrets in name order, after `after` (exclusive). */
export async function listSecretMeta(
  db: D1Database,
  tenant: string,
  { after, limit }: { after?: string | undefined; limit: number },
): Promise<{ secrets: SecretMeta[]; next: string | null }> {
  const { results } = await db
    .prepare(`SELECT ${META} FROM vault_secrets WHERE tenant = ?1 AND name > ?2 ORDER BY name LIMIT ?3`)
    .bind(tenant, after ?? "", limit + 1)
    .all<SecretMeta>();
  const secrets = results.slice(0, limit);
  return { secrets, next: results.length > limit ? (secrets.at(-1)?.name ?? null) : null };
}

/** Deletes a secret; false when there was none. */
export async function deleteSealed(db: D1Database, tenant: string, name: string): Promise<boolean> {
  const result = await db.prepare("DELETE FROM vault_secrets WHERE tenant = ?1 AND name = ?2").bind(tenant, name).run();
  return result.meta.changes > 0;
}

/** Where a walk over the vault's rows is: the last row seen, in (tenant, name) order. */
export interface VaultPosition {
  tenant: string;
  name: string;
}

/**
 * Rows sealed under another key than `current`, in (tenant, name) order after `after`: what a
 * rotation still has to move (a walk, so rows that never open do not hold the rest back).
 */
export async function rowsNotUnder(
  db: D1Database,
  current: string,
  limit: number,
  after: VaultPosition | null = null,
): Promise<(SealedRow & { tenant: string })[]> {
  const { results } = await db
    .prepare(
      `SELECT tenant, ${SEALED} FROM vault_secrets
       WHERE key_id != ?1 AND (tenant, name) > (?3, ?4) ORDER BY tenant, name LIMIT ?2`,
    )
    .bind(current, limit, after?.tenant ?? "", after?.name ?? "")
    .all();
  return results.map((row) => ({ ...SealedRow.parse(row), tenant: String(row.tenant) }));
}

/**
 * Replaces a row's wrapped data key, only if the row is still the one that was read (a value
 * written meanwhile is already sealed under the current key, and is left alone).
 */
export function replaceWrapStatement(
  db: D1Database,
  tenant: string,
  before: SealedRow,
  after: Sealed,
): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE vault_secrets SET key_id = ?3, wrapped_key = ?4
       WHERE tenant = ?1 AND name = ?2 AND key_id = ?5 AND wrapped_key = ?6 AND ciphertext = ?7`,
    )
    .bind(tenant, before.name, after.key_id, after.wrapped_key, before.key_id, before.wrapped_key, before.ciphertext);
}
