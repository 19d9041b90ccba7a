import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env";
import { RelayError } from "../errors";

/**
 * The operator's key (`RELAY_OPERATOR_KEY`) for `/v1/operator/…` (docs/operations.md, Quotas):
 * every tenant's quotas and usage. No tenant key reaches these routes, and this key reaches
 * no tenant's. Fails closed: without the secret the routes answer 503. Compared as SHA-256
 * digests in constant time, as tenant keys are.
 */
export function operatorAuth(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const configured = c.env.RELAY_OPERATOR_KEY?.trim();
    if (!configured) {
      throw new RelayError(
        "AUTH_NOT_CONFIGURED",
        "No operator key is configured: set the RELAY_OPERATOR_KEY secret to use /v1/operator.",
      );
    }
    const presented = /^Bearer\s+(\S+)$/i.exec(c.req.header("Authorization") ?? "")?.[1];
    if (!presented) throw new RelayError("UNAUTHORIZED", "Missing operator key: send 'Authorization: Bearer <key>'.");
    const [want, got] = await Promise.all([digest(configured), digest(presented)]);
    if (!crypto.subtle.timingSafeEqual(want, got)) throw new RelayError("UNAUTHORIZED", "Invalid operator key.");
    await next();
  };
}

function digest(text: string): Promise<ArrayBuffer> {
  return crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
}
