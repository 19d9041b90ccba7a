import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env";
import { RelayError } from "../errors";
import { quotaExceeded } from "../quotas/admission";
import { requestRefusal } from "../services/request-rate";
import { tenantLimits } from "../services/tenant-limits";
import { countRefused, usageMeter } from "../services/usage-meter";
import { counted } from "../usage/counts";
import { identifyKey, type KeyIdentity, keyEntries } from "./api-keys";

/**
 * Bearer-key auth that fails closed: no keys configured means no API at all (503),
 * never an open one. Sets `tenant` for everything downstream. A browser's WebSocket cannot
 * set headers, so an upgrade may carry the key as a `bearer.<key>` subprotocol instead.
 * Then, before anything else is done, the key's request limit (docs/operations.md, Quotas):
 * a request over it is refused 429; one let through is counted in the tenant's usage.
 */
export function apiKeyAuth(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const entries = await keyEntries(c.env.RELAY_API_KEYS);
    if (entries.length === 0) {
      throw new RelayError(
        "AUTH_NOT_CONFIGURED",
        "No API keys are configured: set the RELAY_API_KEYS secret (tenant:key entries).",
      );
    }
    const header = c.req.header("Authorization") ?? "";
    const key =
      /^Bearer\s+(\S+)$/i.exec(header)?.[1] ??
      socketKey(c.req.header("Upgrade"), c.req.header("Sec-WebSocket-Protocol"));
    if (!key) {
      throw new RelayError("UNAUTHORIZED", "Missing API key: send 'Authorization: Bearer <key>'.");
    }
    const who = await identifyKey(entries, key);
    if (!who) throw new RelayError("UNAUTHORIZED", "Invalid API key.");
    c.set("tenant", who.tenant);
    await admitRequest(c, who);
    await next();
  };
}

/** The key's request limit, then the request counted; the tenant's limits come from this isolate's copy. */
async function admitRequest(c: Context<AppEnv>, who: KeyIdentity): Promise<void> {
  const background = backgroundOf(c);
  const { limits } = await tenantLimits(c.env, who.tenant);
  const refusal = await requestRefusal(c.env, `${who.tenant}:${who.key_id}`, limits.requests_per_minute);
  if (refusal) {
    countRefused(c.env, who.tenant, refusal.limit, background);
    throw RelayError.fromBody(quotaExceeded(refusal));
  }
  usageMeter.add(c.env, who.tenant, counted({ requests: 1 }), background);
}

/** The request's `waitUntil`, or a detached promise where there is no execution context (app.request). */
export function backgroundOf(c: Context<AppEnv>): (work: Promise<unknown>) => void {
  try {
    const ctx = c.executionCtx;
    return (work) => ctx.waitUntil(work);
  } catch {
    return (work) => void work.catch(() => undefined);
  }
}

/** The key a WebSocket upgrade offers as the `bearer.<key>` subprotocol, if any. */
function socketKey(upgrade: string | undefined, protocols: string | undefined): string | undefined {
  if (upgrade?.toLowerCase() !== "websocket" || !protocols) return undefined;
  return protocols
    .split(",")
    .map((p) => p.trim())
    .find((p) => p.startsWith("bearer.") && p.length > 7)
    ?.slice(7);
}
