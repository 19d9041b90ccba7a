/**
 * Which MCP era a server speaks, remembered per isolate (docs/mcp.md, Revisions): the SDK
 * client finds it out with a `server/discover` probe that falls back to `initialize`, and
 * accepts the verdict of an earlier connection (`connect({ prior })`) instead. A modern
 * verdict carries the server's discover result, so the next connection makes no round trip
 * before its request; a legacy verdict skips the probe that a 2025-11-25 server refuses.
 *
 * A verdict is reused only by the same tenant, for the same URL, with the same header
 * values (one authorization context), and for ten minutes at most: a server that moved to
 * 2026-07-28 still answers `initialize`, so a legacy verdict would never correct itself.
 * A connection that fails drops its verdict, so a stale modern one costs one failed request.
 */
import type { PriorDiscovery } from "@modelcontextprotocol/client";

/** How long a verdict is reused. */
export const ERA_VERDICT_TTL_MS = 10 * 60_000;
/** Verdicts kept per isolate; the oldest goes first. */
const MAX_VERDICTS = 256;

const verdicts = new Map<string, { prior: PriorDiscovery; until: number }>();

/**
 * The key a verdict is kept under: the tenant, the server's URL and a digest of the header
 * values sent (so no secret is kept in the key).
 */
export async function eraKey(tenant: string, url: string, headers: Record<string, string>): Promise<string> {
  const sorted = Object.entries(headers)
    .map(([name, value]) => [name.toLowerCase(), value])
    .sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0));
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(JSON.stringify(sorted)));
  const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return JSON.stringify([tenant, url, hex]);
}

/** The verdict to connect with, if one is kept and fresh. */
export function priorEra(key: string, now: number): PriorDiscovery | undefined {
  const kept = verdicts.get(key);
  if (!kept) return undefined;
  if (kept.until > now) return kept.prior;
  verdicts.delete(key);
  return undefined;
}

/** Keeps what a connection found out: the modern era with its discover result, or the legacy one. */
export function rememberEra(key: string, prior: PriorDiscovery | undefined, now: number): void {
  if (!prior) return;
  verdicts.delete(key);
  verdicts.set(key, { prior, until: now + ERA_VERDICT_TTL_MS });
  while (verdicts.size > MAX_VERDICTS) {
    const oldest = verdicts.keys().next().value;
    if (oldest === undefined) break;
    verdicts.delete(oldest);
  }
}

/** Drops a verdict (its connection failed: the next one probes again). */
export function forgetEra(key: string): void {
  verdicts.delete(key);
}
