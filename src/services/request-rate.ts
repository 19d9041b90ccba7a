import { type Refusal, windowRefusal } from "../quotas/admission";

/**
 * Requests a minute per API key, counted by the platform's Rate Limiting binding (docs/
 * operations.md, Quotas). A binding has one fixed limit, so each value a tenant's
 * `requests_per_minute` may take is a binding of its own, named for it:
 * `REQUESTS_PER_MINUTE_<n>` (`[[ratelimits]]` in wrangler.toml, `simple = { limit = n, period = 60 }`).
 * The operator picks one of these tiers per tenant.
 */

/** What the Rate Limiting binding offers. */
interface RateLimiter {
  limit(options: { key: string }): Promise<{ success: boolean }>;
}

const TIER = /^REQUESTS_PER_MINUTE_([1-9]\d{0,9})$/;

/** The binding name of a tier. */
export const tierBinding = (perMinute: number): string => `REQUESTS_PER_MINUTE_${perMinute}`;

function limiterOf(env: object, perMinute: number): RateLimiter | null {
  const binding = (env as Record<string, unknown>)[tierBinding(perMinute)];
  return typeof (binding as RateLimiter | undefined)?.limit === "function" ? (binding as RateLimiter) : null;
}

/** The tiers the deployment binds, smallest first: the values `requests_per_minute` may take besides none. */
export function requestTiers(env: object): number[] {
  return Object.keys(env)
    .map((name) => TIER.exec(name)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .filter((n) => limiterOf(env, n) !== null)
    .sort((a, b) => a - b);
}

/** Tiers named by a limit but not bound, each reported once per isolate. */
const reported = new Set<number>();

/**
 * The refusal of one more request with `key` (the tenant and which of its keys) at
 * `perMinute`, or null. No limit (null) counts nothing. A tier with no binding lets the
 * request through and logs it once: a missing binding is the deployment's mistake, and
 * closing the API over it would take every tenant on that tier down.
 */
export async function requestRefusal(env: object, key: string, perMinute: number | null): Promise<Refusal | null> {
  if (perMinute === null) return null;
  const limiter = limiterOf(env, perMinute);
  if (!limiter) {
    if (!reported.has(perMinute)) {
      reported.add(perMinute);
      console.error(
        `quota: no [[ratelimits]] binding ${tierBinding(perMinute)}; requests on that tier are not limited`,
      );
    }
    return null;
  }
  const { success } = await limiter.limit({ key });
  return success ? null : windowRefusal("requests_per_minute", perMinute, perMinute, "minute", Date.now());
}
