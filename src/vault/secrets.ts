import type { ErrorCode } from "../errors/codes";
import { RelayError } from "../errors/relay-error";
import { open, rewrap, seal } from "./envelope";
import { type Keyring, vaultKeyring } from "./keyring";
import type { SecretReference } from "./references";
import {
  deleteSealed,
  putSealed,
  replaceWrapStatement,
  rowsNotUnder,
  type SecretMeta,
  sealedRows,
  type VaultPosition,
} from "./vault-store";

/**
 * The tenant vault's operations (docs/security.md, The tenant vault): store a value sealed,
 * read the values a call needs, forget, rewrap after a key rotation. A name is only ever
 * looked up in the tenant's own rows: nothing here reads the Worker's environment but the
 * one key setting, RELAY_VAULT_KEY.
 */

/** What the vault needs of the Worker's environment. */
export interface VaultEnv {
  DB: D1Database;
  RELAY_VAULT_KEY?: string;
}

/**
 * How long an isolate uses a value it opened. A new value through this isolate is used at
 * once; through another, within this time.
 */
export const SECRET_TTL_MS = 10_000;
const MAX_CACHED = 10_000;

const opened = new Map<string, { value: string; expires: number }>();
const cacheKey = (tenant: string, name: string) => `${tenant}\0${name}`;

/** Forgets this isolate's copy of a secret (after it was replaced or deleted here). */
export function forgetSecret(tenant: string, name: string): void {
  opened.delete(cacheKey(tenant, name));
}

async function keyringOf(env: VaultEnv): Promise<{ ok: true; keyring: Keyring } | { ok: false; message: string }> {
  const result = await vaultKeyring(env.RELAY_VAULT_KEY);
  return result.ok ? result : { ok: false, message: result.message };
}

/** Seals and stores `value` as the tenant's secret `name` (VAULT_UNAVAILABLE, VAULT_FULL). */
export async function storeSecret(
  env: VaultEnv,
  tenant: string,
  name: string,
  value: string,
  now = new Date(),
): Promise<{ created: boolean; meta: SecretMeta }> {
  const keyring = await keyringOf(env);
  if (!keyring.ok) throw new RelayError("VAULT_UNAVAILABLE", `${keyring.message}; nothing was stored.`);
  const sealed = await seal(keyring.keyring, tenant, name, value);
  const stored = await putSealed(env.DB, tenant, name, sealed, now.toISOString());
  if (!stored)
    throw new RelayError("VAULT_FULL", "The vault holds as many secrets as it may: delete one first.", {
      secret: name,
    });
  forgetSecret(tenant, name);
  return stored;
}

/** The references whose secret the tenant's vault lacks. */
export async function missingSecrets(
  db: D1Database,
  tenant: string,
  refs: readonly SecretReference[],
): Promise<SecretReference[]> {
  if (refs.length === 0) return [];
  const rows = await sealedRows(
    db,
    tenant,
    refs.map((ref) => ref.name),
  );
  return refs.filter((ref) => !rows.has(ref.name));
}

/** The values a call needs, by name; or why it cannot be made (a coded message that says what to do). */
export type SecretsRead =
  | { ok: true; values: ReadonlyMap<string, string> }
  | { ok: false; code: ErrorCode; message: string };

/**
 * Opens the secrets `refs` name for a call `owner` makes (`'github' (mcp tool)`). A name the
 * vault lacks fails the call with UNKNOWN_SECRET naming it and how to store it; a vault
 * without its key, or a value sealed under a key no longer configured, with
 * VAULT_UNAVAILABLE; D1 down with DEPENDENCY_UNAVAILABLE. Never throws.
 */
export async function readSecrets(
  env: VaultEnv,
  tenant: string,
  refs: readonly SecretReference[],
  owner: string,
  now = Date.now(),
): Promise<SecretsRead> {
  const values = new Map<string, string>();
  const wanted = refs.filter((ref) => {
    const cached = opened.get(cacheKey(tenant, ref.name));
    if (cached && cached.expires > now) values.set(ref.name, cached.value);
    return !values.has(ref.name);
  });
  if (wanted.length === 0) return { ok: true, values };
  const keyring = await keyringOf(env);
  if (!keyring.ok) return { ok: false, code: "VAULT_UNAVAILABLE", message: `${owner}: ${keyring.message}` };
  let rows: Awaited<ReturnType<typeof sealedRows>>;
  try {
    rows = await sealedRows(
      env.DB,
      tenant,
      wanted.map((ref) => ref.name),
    );
  } catch {
    return { ok: false, code: "DEPENDENCY_UNAVAILABLE", message: `${owner}: the vault could not be read (D1)` };
  }
  for (const ref of wanted) {
    if (values.has(ref.name)) continue;
    const row = rows.get(ref.name);
    if (!row)
      return {
        ok: false,
        code: "UNKNOWN_SECRET",
        message: `${owner}: ${ref.field} names the secret '${ref.name}', which is not in this tenant's vault: store it with PUT /v1/secrets/${ref.name}`,
      };
    const value = await open(keyring.keyring, tenant, ref.name, row);
    if (!value.ok)
      return {
        ok: false,
        code: "VAULT_UNAVAILABLE",
        message:
          value.reason === "key_missing"
            ? `${owner}: the secret '${ref.name}' was sealed under a vault key RELAY_VAULT_KEY no longer holds`
            : `${owner}: the secret '${ref.name}' does not open under this tenant's key`,
      };
    if (opened.size >= MAX_CACHED) opened.clear();
    opened.set(cacheKey(tenant, ref.name), { value: value.value, expires: now + SECRET_TTL_MS });
    values.set(ref.name, value.value);
  }
  return { ok: true, values };
}

/** Deletes the tenant's secret `name`; false when there was none. */
export async function removeSecret(db: D1Database, tenant: string, name: string): Promise<boolean> {
  const deleted = await deleteSealed(db, tenant, name);
  forgetSecret(tenant, name);
  return deleted;
}

/** What one rewrap pass did: rows moved to the current key, rows that would not open, and where the next pass starts (null: done). */
export interface RewrapReport {
  rewrapped: number;
  unreadable: number;
  next: VaultPosition | null;
}

/**
 * Moves up to `limit` secrets sealed under an older key, after `after`, to the current one
 * (after an operator put a new key first in RELAY_VAULT_KEY). Only data keys are resealed;
 * values stay as they are. A row that does not open (its key already removed) is counted and
 * left alone.
 */
export async function rewrapVault(
  env: VaultEnv,
  limit = 500,
  after: VaultPosition | null = null,
): Promise<RewrapReport> {
  const keyring = await keyringOf(env);
  if (!keyring.ok) return { rewrapped: 0, unreadable: 0, next: null };
  const rows = await rowsNotUnder(env.DB, keyring.keyring.current.id, limit, after);
  const statements: D1PreparedStatement[] = [];
  let unreadable = 0;
  for (const row of rows) {
    const moved = await rewrap(keyring.keyring, row.tenant, row.name, row);
    if (moved.ok) statements.push(replaceWrapStatement(env.DB, row.tenant, row, moved.sealed));
    else unreadable++;
  }
  let rewrapped = 0;
  for (let at = 0; at < statements.length; at += 50) {
    const results = await env.DB.batch(statements.slice(at, at + 50));
    rewrapped += results.reduce((sum, result) => sum + (result.meta.changes ?? 0), 0);
  }
  const last = rows.at(-1);
  return {
    rewrapped,
    unreadable,
    next: rows.length === limit && last ? { tenant: last.tenant, name: last.name } : null,
  };
}
