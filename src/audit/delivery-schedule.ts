/**
 * When a failed lifecycle notification (webhooks out) is tried again, and when it is given
 * up. A receiver that stays down gets five retries over about 76 minutes; past the last,
 * the delivery is dropped from the queue and recorded as `webhook.delivery_failed`.
 */

/** Waits before each retry, in order; past the last, the delivery is given up. */
export const RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 3_600_000] as const;

export type NextAttempt = { type: "retry"; attempts: number; at: number } | { type: "give_up"; attempts: number };

/** After a failed attempt: `attempts` is how many were made before this one. */
export function afterFailure(attempts: number, now: number): NextAttempt {
  const made = attempts + 1;
  const delay = RETRY_DELAYS_MS[made - 1];
  return delay === undefined ? { type: "give_up", attempts: made } : { type: "retry", attempts: made, at: now + delay };
}

/** When to look again after the tenant's subscription could not be read. */
export const unreadableSubscriptionRetryAt = (now: number): number => now + RETRY_DELAYS_MS[0];
