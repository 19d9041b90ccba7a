import { LIMIT_NAMES, type LimitName, type LimitSource, type Limits, type QuotaView } from "../schemas/quotas";
import { WINDOW_OF } from "./limits";
import { windowEnd } from "./windows";

/** Each of a tenant's limits as the API shows it: value, source, use now and when its window ends. Pure. */

/** What the tenant uses now of each limit; null where nobody counts it for Relay (requests: the platform's limiter). */
export type LimitUse = Record<LimitName, number | null>;

export function quotaViews(
  limits: Limits,
  sources: Record<LimitName, LimitSource>,
  use: LimitUse,
  at: number,
): QuotaView[] {
  return LIMIT_NAMES.map((limit) => {
    const window = WINDOW_OF[limit];
    return {
      limit,
      value: limits[limit],
      source: sources[limit],
      window,
      used: use[limit],
      resets_at: window === null ? null : new Date(windowEnd(window, at)).toISOString(),
    };
  });
}
