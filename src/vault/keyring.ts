import { fromBase64, toBase64 } from "../lib/base64";

/**
 * The deployment's vault keys, from the one operator secret RELAY_VAULT_KEY: one or more
 * comma-separated keys, each at least 32 random bytes in base64. The first seals every new
 * or rewrapped secret; all of them open (a rotation puts the new key first and keeps the old
 * one until the hourly rewrap has moved every secret: docs/operations.md, Rotating the vault
 * key). A key is known by an id derived from it, stored beside each secret it sealed, so the
 * order of the list can change without breaking anything.
 */

/** The fewest key bytes accepted: an AES-256 key's worth of entropy. */
export const MIN_VAULT_KEY_BYTES = 32;

/** One deployment key: its id and the HKDF key every tenant's key-encryption key comes from. */
export interface VaultKey {
  id: string;
  base: CryptoKey;
}

export interface Keyring {
  /** Seals: the first key listed. */
  current: VaultKey;
  /** Opens: every key listed, by id. */
  byId: ReadonlyMap<string, VaultKey>;
}

/** Why there is no keyring: no key set, or a key that is not usable (the message says which, never its text). */
export type KeyringProblem = { reason: "not_configured" | "invalid_key"; message: string };

export type KeyringResult = { ok: true; keyring: Keyring } | ({ ok: false } & KeyringProblem);

const encoder = new TextEncoder();

/** A key's id: 12 characters of a hash of it, enough to tell keys apart, nothing to learn from. */
async function keyId(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new Uint8Array([...encoder.encode("relay-vault-key-id\0"), ...bytes]),
  );
  return toBase64(new Uint8Array(digest), true).slice(0, 12);
}

async function parse(text: string | undefined): Promise<KeyringResult> {
  const entries = (text ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  if (entries.length === 0)
    return { ok: false, reason: "not_configured", message: "RELAY_VAULT_KEY is not set: the vault is unavailable" };
  const keys: VaultKey[] = [];
  for (const [index, entry] of entries.entries()) {
    const bytes = fromBase64(entry);
    if (bytes === null || bytes.length < MIN_VAULT_KEY_BYTES)
      return {
        ok: false,
        reason: "invalid_key",
        message: `RELAY_VAULT_KEY's key ${index + 1} is not at least ${MIN_VAULT_KEY_BYTES} bytes of base64`,
      };
    const base = await crypto.subtle.importKey("raw", bytes, "HKDF", false, ["deriveKey"]);
    keys.push({ id: await keyId(bytes), base });
  }
  return { ok: true, keyring: { current: keys[0]!, byId: new Map(keys.map((key) => [key.id, key])) } };
}

// One parse per distinct setting per isolate (a deployment has one; a test may use a few).
const parsed = new Map<string, Promise<KeyringResult>>();

/** The keyring RELAY_VAULT_KEY describes, parsed once per isolate. */
export function vaultKeyring(setting: string | undefined): Promise<KeyringResult> {
  const text = setting ?? "";
  let result = parsed.get(text);
  if (!result) {
    if (parsed.size >= 8) parsed.clear();
    result = parse(text);
    parsed.set(text, result);
  }
  return result;
}
