/**
 * Standard Webhooks v1 (https://www.standardwebhooks.com): HMAC-SHA256 over
 * `${id}.${timestamp}.${body}`, carried as `webhook-signature: v1,<base64>` beside
 * `webhook-id` and `webhook-timestamp`. WebCrypto only, so it runs in workerd as is.
 * Signing serves webhook agents (Relay calling out); verification serves signed webhooks in,
 * and the client's `verifyWebhook` (client/src/webhooks.ts), which runs this module's checks
 * for those who receive Relay's deliveries. So it imports nothing and uses only what Node,
 * browsers and workerd all have, in erasable TypeScript that Node runs as it is.
 * Both agree byte for byte with the `standardwebhooks` reference package (tested).
 */

/** The reference library's tolerance either side of now, in seconds. */
export const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

const SECRET_PREFIX = "whsec_";
const VERSION = "v1";
// An HMAC-SHA256 digest in padded base64 is always this long; anything else cannot match.
const SIGNATURE_LENGTH = 44;

const encoder = new TextEncoder();

/**
 * The key bytes of a secret: `whsec_` + base64, or the base64 alone (the reference library
 * accepts both). Null when the text is not base64 or decodes to nothing. ArrayBuffer-backed,
 * as DOM's `BufferSource` (the client's type check) asks.
 */
export function decodeWebhookSecret(secret: string): Uint8Array<ArrayBuffer> | null {
  const text = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    return null;
  }
  if (binary.length === 0) return null;
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** A secret setting split for rotation: comma-separated, blanks ignored, order kept. */
export function secretList(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** True when `secret` can sign and verify (see {@link decodeWebhookSecret}). */
export function isWebhookSecret(secret: string): boolean {
  return decodeWebhookSecret(secret) !== null;
}

function keyOf(secret: string): Uint8Array<ArrayBuffer> {
  const key = decodeWebhookSecret(secret);
  // Callers check secrets up front (isWebhookSecret); reaching this is a programming error.
  if (key === null) throw new TypeError("not a Standard Webhooks secret (expected whsec_ + base64)");
  return key;
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

async function digest(
  key: Uint8Array<ArrayBuffer>,
  id: string,
  timestampSeconds: number,
  body: string,
): Promise<string> {
  const hmacKey = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", hmacKey, encoder.encode(`${id}.${timestampSeconds}.${body}`));
  return toBase64(new Uint8Array(mac));
}

/**
 * One v1 signature, `v1,<base64>`, of `body` sent as message `id` at `timestampSeconds`.
 * Throws a TypeError when `secret` is not a Standard Webhooks secret.
 */
export async function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): Promise<string> {
  return `${VERSION},${await digest(keyOf(secret), id, timestampSeconds, body)}`;
}

/** The three Standard Webhooks headers. */
export type WebhookHeaders = {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
};

/**
 * The headers of a signed delivery. Several secrets give several signatures, space-separated
 * (the spec's zero-downtime rotation: a receiver holding any one of them verifies).
 * Throws a TypeError when a secret is not a Standard Webhooks secret, or none is given.
 */
export async function webhookHeaders(
  secrets: string | readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): Promise<WebhookHeaders> {
  const list = typeof secrets === "string" ? [secrets] : secrets;
  if (list.length === 0) throw new TypeError("webhookHeaders needs at least one secret");
  const signatures = await Promise.all(list.map((secret) => signWebhook(secret, id, timestampSeconds, body)));
  return { "webhook-id": id, "webhook-timestamp": String(timestampSeconds), "webhook-signature": signatures.join(" ") };
}

/**
 * Why a delivery was refused:
 * - `missing_headers`: webhook-id, webhook-timestamp or webhook-signature absent or empty;
 * - `invalid_timestamp`: webhook-timestamp is not whole seconds since the epoch;
 * - `stale` / `future`: the timestamp is further than the tolerance before / after now;
 * - `bad_signature`: no `v1` signature in the header matches any of the secrets;
 * - `invalid_secret`: a configured secret is not `whsec_` + base64 (a configuration error,
 *   reported rather than skipped so a typo in a rotation list cannot pass unnoticed).
 */
export type WebhookRefusal =
  | "missing_headers"
  | "invalid_timestamp"
  | "stale"
  | "future"
  | "bad_signature"
  | "invalid_secret";

/** A verified delivery's id and timestamp (the id is what replay protection keys on), or why it was refused. */
export type WebhookVerification = { ok: true; id: string; timestamp: number } | { ok: false; reason: WebhookRefusal };

/**
 * Request headers as a `Headers` object, or a plain record in any key case, such as Node's
 * `IncomingMessage.headers` (a repeated header's values are joined by spaces).
 */
export type HeaderSource = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

function header(headers: HeaderSource, name: string): string | null {
  // Duck-typed rather than `instanceof`: another realm's or library's Headers is one too.
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name);
  for (const [key, value] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    return typeof value === "string" ? value : value.join(" ");
  }
  return null;
}

/**
 * Equal text, in time that depends only on its length. Written out because workerd's
 * `crypto.subtle.timingSafeEqual` is not in Node or browsers; callers compare digests of
 * one fixed length only.
 */
function equalText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Verifies a Standard Webhooks v1 delivery against `body` exactly as received. Any of
 * `secrets` (rotation) may match any of the header's signatures; other versions are ignored.
 * Digests are compared in constant time, only ever at their fixed length.
 */
export async function verifyWebhook(
  secrets: readonly string[],
  headers: HeaderSource,
  body: string,
  nowSeconds: number,
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
): Promise<WebhookVerification> {
  const id = header(headers, "webhook-id");
  const timestampText = header(headers, "webhook-timestamp");
  const signatureText = header(headers, "webhook-signature");
  if (!id || !timestampText || !signatureText) return { ok: false, reason: "missing_headers" };
  if (!/^\d{1,15}$/.test(timestampText.trim())) return { ok: false, reason: "invalid_timestamp" };
  const timestamp = Number(timestampText.trim());
  if (nowSeconds - timestamp > toleranceSeconds) return { ok: false, reason: "stale" };
  if (timestamp - nowSeconds > toleranceSeconds) return { ok: false, reason: "future" };

  const keys = secrets.map(decodeWebhookSecret);
  if (keys.length === 0 || keys.some((key) => key === null)) return { ok: false, reason: "invalid_secret" };

  const offered = signatureText
    .split(" ")
    .map((entry) => entry.split(","))
    .filter(([version, signature]) => version === VERSION && signature?.length === SIGNATURE_LENGTH)
    .map(([, signature]) => signature!);
  for (const key of keys as Uint8Array<ArrayBuffer>[]) {
    const expected = await digest(key, id, timestamp, body);
    // Every candidate is compared, so the time taken does not reveal which one matched.
    let matched = false;
    for (const signature of offered) matched = equalText(signature, expected) || matched;
    if (matched) return { ok: true, id, timestamp };
  }
  return { ok: false, reason: "bad_signature" };
}
