import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env";
import { RelayError } from "../errors";
import { keyEntries, tenantForKey } from "./api-keys";

/**
 * Bearer-key auth that fails closed: no keys configured means no API at all (503),
 * never an open one. Sets `tenant` for everything downstream. A browser's WebSocket cannot
 * set headers, so an upgrade may carry the key as a `bearer.<key>` subprotocol instead.
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
    const tenant = await tenantForKey(entries, key);
    if (!tenant) throw new RelayError("UNAUTHORIZED", "Invalid API key.");
    c.set("tenant", tenant);
    await next();
  };
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
