import { fromBase64, toBase64 } from "../lib/base64";
import type { Keyring, VaultKey } from "./keyring";

/**
 * Envelope encryption of one secret (WebCrypto, AES-256-GCM). The value is sealed under a
 * data key of its own; the data key is sealed under the tenant's key-encryption key, derived
 * (HKDF-SHA256) from a deployment key and the tenant's name. Both seals bind the tenant and
 * the secret's name as associated data, so a row copied to another tenant or renamed does not
 * open. Rotating the deployment key reseals only the data key (`rewrap`); the value's
 * ciphertext never changes.
 */

/** A sealed secret as stored (the vault table's columns): text, so a row reads as it is. */
export interface Sealed {
  /** The deployment key that sealed the data key. */
  key_id: string;
  /** base64url of IV ‖ AES-GCM(key-encryption key, data key). */
  wrapped_key: string;
  /** base64url of IV ‖ AES-GCM(data key, value). */
  ciphertext: string;
}

/** Why a sealed secret did not open: its key is no longer in RELAY_VAULT_KEY, or the row does not open as this tenant's secret of this name. */
export type OpenFailure = "key_missing" | "corrupt";

const IV_BYTES = 12;
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const AES_GCM = { name: "AES-GCM", length: 256 } as const;

const associatedData = (tenant: string, name: string) => encoder.encode(`relay-vault/v1\0${tenant}\0${name}`);

// Derived keys per isolate, by deployment key and tenant; cleared when it grows past a bound.
const derived = new Map<string, Promise<CryptoKey>>();
const MAX_DERIVED = 1024;

/** The tenant's key-encryption key under one deployment key. */
function tenantKey(key: VaultKey, tenant: string): Promise<CryptoKey> {
  const cacheKey = `${key.id}\0${tenant}`;
  let found = derived.get(cacheKey);
  if (!found) {
    if (derived.size >= MAX_DERIVED) derived.clear();
    found = crypto.subtle.deriveKey(
      { name: "HKDF", hash: "SHA-256", salt: encoder.encode("relay-vault/v1"), info: encoder.encode(`kek\0${tenant}`) },
      key.base,
      AES_GCM,
      false,
      ["encrypt", "decrypt"],
    );
    derived.set(cacheKey, found);
  }
  return found;
}

async function encrypt(key: CryptoKey, plain: Uint8Array, aad: Uint8Array): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: aad }, key, plain));
  const out = new Uint8Array(IV_BYTES + sealed.length);
  out.set(iv);
  out.set(sealed, IV_BYTES);
  return toBase64(out, true);
}

/** The plain bytes, or null when the text is not ours or does not authenticate. */
async function decrypt(key: CryptoKey, text: string, aad: Uint8Array): Promise<Uint8Array | null> {
  const bytes = fromBase64(text);
  if (bytes === null || bytes.length <= IV_BYTES) return null;
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: bytes.subarray(0, IV_BYTES), additionalData: aad },
      key,
      bytes.subarray(IV_BYTES),
    );
    return new Uint8Array(plain);
  } catch {
    return null;
  }
}

/** Seals `value` as `tenant`'s secret `name` under the keyring's current key. */
export async function seal(keyring: Keyring, tenant: string, name: string, value: string): Promise<Sealed> {
  const aad = associatedData(tenant, name);
  const dataKey = crypto.getRandomValues(new Uint8Array(32));
  const dataCryptoKey = await crypto.subtle.importKey("raw", dataKey, AES_GCM, false, ["encrypt"]);
  return {
    key_id: keyring.current.id,
    wrapped_key: await encrypt(await tenantKey(keyring.current, tenant), dataKey, aad),
    ciphertext: await encrypt(dataCryptoKey, encoder.encode(value), aad),
  };
}

/** The data key of a sealed secret, or why it cannot be had. */
async function unwrap(
  keyring: Keyring,
  tenant: string,
  name: string,
  sealed: Sealed,
): Promise<{ ok: true; dataKey: Uint8Array } | { ok: false; reason: OpenFailure }> {
  const key = keyring.byId.get(sealed.key_id);
  if (!key) return { ok: false, reason: "key_missing" };
  const dataKey = await decrypt(await tenantKey(key, tenant), sealed.wrapped_key, associatedData(tenant, name));
  return dataKey === null || dataKey.length !== 32 ? { ok: false, reason: "corrupt" } : { ok: true, dataKey };
}

/** The value of `tenant`'s secret `name`, or why it does not open. */
export async function open(
  keyring: Keyring,
  tenant: string,
  name: string,
  sealed: Sealed,
): Promise<{ ok: true; value: string } | { ok: false; reason: OpenFailure }> {
  const unwrapped = await unwrap(keyring, tenant, name, sealed);
  if (!unwrapped.ok) return unwrapped;
  const dataCryptoKey = await crypto.subtle.importKey("raw", unwrapped.dataKey, AES_GCM, false, ["decrypt"]);
  const plain = await decrypt(dataCryptoKey, sealed.ciphertext, associatedData(tenant, name));
  if (plain === null) return { ok: false, reason: "corrupt" };
  try {
    return { ok: true, value: decoder.decode(plain) };
  } catch {
    return { ok: false, reason: "corrupt" };
  }
}

/**
 * The same secret with its data key sealed under the keyring's current key (a deployment
 * key rotation); the value's ciphertext is kept as it is.
 */
export async function rewrap(
  keyring: Keyring,
  tenant: string,
  name: string,
  sealed: Sealed,
): Promise<{ ok: true; sealed: Sealed } | { ok: false; reason: OpenFailure }> {
  const unwrapped = await unwrap(keyring, tenant, name, sealed);
  if (!unwrapped.ok) return unwrapped;
  const wrapped_key = await encrypt(
    await tenantKey(keyring.current, tenant),
    unwrapped.dataKey,
    associatedData(tenant, name),
  );
  return { ok: true, sealed: { key_id: keyring.current.id, wrapped_key, ciphertext: sealed.ciphertext } };
}
