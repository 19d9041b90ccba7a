/**
 * API keys: `RELAY_API_KEYS` holds `tenant:key` entries, comma-separated. Each key names
 * the tenant it acts for. Keys are compared as SHA-256 digests in constant time, so
 * neither a key's content nor its length leaks through timing.
 */
export interface ApiKeyEntry {
  tenant: string;
  digest: ArrayBuffer;
}

const TENANT = /^[a-z0-9][a-z0-9_-]{0,63}$/;

export function parseApiKeys(raw: string | undefined): { tenant: string; key: string }[] {
  if (!raw) return [];
  return raw
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean)
    .flatMap((entry) => {
      const at = entry.indexOf(":");
      return at > 0 ? [{ tenant: entry.slice(0, at), key: entry.slice(at + 1) }] : [];
    })
    .filter(({ tenant, key }) => TENANT.test(tenant) && key.length >= 8);
}

async function sha256(text: string): Promise<ArrayBuffer> {
  return crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
}

const digestCache = new Map<string, Promise<ApiKeyEntry[]>>();

/** Digests of the configured keys, computed once per distinct secret value per isolate. */
export function keyEntries(raw: string | undefined): Promise<ApiKeyEntry[]> {
  const cacheKey = raw ?? "";
  let entries = digestCache.get(cacheKey);
  if (!entries) {
    entries = Promise.all(parseApiKeys(raw).map(async ({ tenant, key }) => ({ tenant, digest: await sha256(key) })));
    digestCache.set(cacheKey, entries);
  }
  return entries;
}

/** Digests of presented keys, so a client's key is hashed once per isolate, not per request. */
const presentedDigests = new Map<string, ArrayBuffer>();
/** Bounded, so random keys sent at the API cannot grow it: past the cap the oldest goes. */
const PRESENTED_MAX = 256;

async function presentedDigest(presented: string): Promise<ArrayBuffer> {
  const cached = presentedDigests.get(presented);
  if (cached) return cached;
  const digest = await sha256(presented);
  if (presentedDigests.size >= PRESENTED_MAX) presentedDigests.delete(presentedDigests.keys().next().value!);
  presentedDigests.set(presented, digest);
  return digest;
}

/** Who a presented key is: its tenant, and an id of the key that says nothing of it (a digest prefix). */
export interface KeyIdentity {
  tenant: string;
  /** 16 hex digits of the key's SHA-256: which of the tenant's keys, for the per-key request limit. */
  key_id: string;
}

/** The tenant and key id of the presented key, or null. Every entry is compared: no early exit. */
export async function identifyKey(entries: ApiKeyEntry[], presented: string): Promise<KeyIdentity | null> {
  const digest = await presentedDigest(presented);
  let tenant: string | null = null;
  for (const entry of entries) {
    if (crypto.subtle.timingSafeEqual(entry.digest, digest) && tenant === null) tenant = entry.tenant;
  }
  if (tenant === null) return null;
  const key_id = [...new Uint8Array(digest, 0, 8)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return { tenant, key_id };
}

/** The tenant the presented key belongs to, or null. */
export async function tenantForKey(entries: ApiKeyEntry[], presented: string): Promise<string | null> {
  return (await identifyKey(entries, presented))?.tenant ?? null;
}
