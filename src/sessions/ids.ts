import { ulid } from "../lib/ulid";

/**
 * Session ids: `ses_` + a lower-case ULID (sorts by creation) + 128 random bits in
 * base32, so an id cannot be guessed from another one. The object behind an id is named
 * `${tenant}:${id}`, so the same id under another tenant's key names another (empty) object.
 */

const BASE32 = "0123456789abcdefghjkmnpqrstvwxyz";

function base32(bytes: Uint8Array): string {
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += BASE32[(buffer >> bits) & 31];
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32[(buffer << (5 - bits)) & 31];
  return out;
}

export const SESSION_ID_PATTERN = /^ses_[0-9a-z]{52}$/;

export function newSessionId(now = Date.now()): string {
  return `ses_${ulid(now).toLowerCase()}${base32(crypto.getRandomValues(new Uint8Array(16)))}`;
}

/** True for ids this module makes; anything else cannot name a session. */
export function isSessionId(id: string): boolean {
  return SESSION_ID_PATTERN.test(id);
}

/** The Durable Object name of a session: the tenant is part of it. */
export function sessionObjectName(tenant: string, sessionId: string): string {
  return `${tenant}:${sessionId}`;
}

/** The Durable Object name of an agent. */
export function agentObjectName(tenant: string, agent: string): string {
  return `${tenant}:${agent}`;
}
