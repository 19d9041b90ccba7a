import type { MiddlewareHandler } from "hono";
import { RelayError } from "../errors";
import type { AppEnv } from "../app-env";
import { keyEntries, tenantForKey } from "./api-keys";

/**
 * Bearer-key auth that fails closed: no keys configured means no API at all (503),
 * never an open one. Sets `tenant` for everything downstream.
 */
export function apiKeyAuth(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const entries = await keyEntries(c.env.RELAY_API_KEYS);
    if (entries.length === 0) {
      throw new RelayError("AUTH_NOT_CONFIGURED", "No API keys are configured: set the RELAY_API_KEYS secret (tenant:key entries).");
    }
    const header = c.req.header("Authorization") ?? "";
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match?.[1]) {
      throw new RelayError("UNAUTHORIZED", "Missing API key: send 'Authorization: Bearer <key>'.");
    }
    const tenant = await tenantForKey(entries, match[1]);
    if (!tenant) throw new RelayError("UNAUTHORIZED", "Invalid API key.");
    c.set("tenant", tenant);
    await next();
  };
}
