/**
 * Base64 both ways for byte arrays, standard or URL-safe (no padding), WebCrypto's
 * companions: workerd has `btoa`/`atob` on binary strings only.
 */

/** `bytes` as base64; URL-safe without padding when `url` is true. */
export function toBase64(bytes: Uint8Array, url = false): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  const text = btoa(binary);
  return url ? text.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "") : text;
}

/** The bytes of base64 text, standard or URL-safe, padded or not; null when it is not base64. */
export function fromBase64(text: string): Uint8Array | null {
  const standard = text.replace(/-/g, "+").replace(/_/g, "/");
  let binary: string;
  try {
    binary = atob(standard.padEnd(Math.ceil(standard.length / 4) * 4, "="));
  } catch {
    return null;
  }
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}
