import { base32, ulid } from "../lib/ulid";

/**
 * Session ids: `ses_` + a lower-case ULID (sorts by creation) + 128 random bits in
 * base32, so an id cannot be guessed from another one. The object behind an id is named
 * `${tenant}:${id}`, so the same id under another tenant's key names another (empty) object.
 */

export const SESSION_ID_PATTERN = /^ses_[0-9a-z]{52}$/;

export function newSessionId(now = Date.now()): string {
  return `ses_${ulid(now).toLowerCase()}${base32(crypto.getRandomValues(new Uint8Array(16))).toLowerCase()}`;
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
