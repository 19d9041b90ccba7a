import type { ErrorBody } from "../errors";
import type { LimitName, Limits, QuotaWindow } from "../schemas/quotas";
import { retryAfterS, windowEnd } from "./windows";

/**
 * Whether the tenant may start a session or a run now: the pure decision the tenant's object
 * takes in the same synchronous step as the count it keeps (docs/operations.md, Quotas).
 */

/** What a caller asks to be counted: a session, a run, or both (a new A2A conversation). */
export interface Ask {
  sessions?: boolean;
  runs?: boolean;
}

/** The tenant's use so far in the windows that hold the time of the ask. */
export interface Used {
  sessions_today: number;
  runs_this_minute: number;
  /** Input and output tokens of the day's model calls. */
  tokens_today: number;
}

/** Why an ask is refused: the limit, its value, its use and when it frees. */
export interface Refusal {
  limit: LimitName;
  value: number;
  used: number;
  /** null for a count of things held (agents, tools): nothing frees by waiting. */
  window: QuotaWindow | null;
  retry_after_s: number | null;
  resets_at: string | null;
}

/** A window limit's refusal at `now`. */
export function windowRefusal(
  limit: LimitName,
  value: number,
  used: number,
  window: QuotaWindow,
  now: number,
): Refusal {
  return {
    limit,
    value,
    used,
    window,
    retry_after_s: retryAfterS(window, now),
    resets_at: new Date(windowEnd(window, now)).toISOString(),
  };
}

/**
 * The refusal of an ask, or null when it is admitted. Sessions and runs are counted one at a
 * time against their window; tokens are known only after a model call, so a run is admitted
 * while the day's tokens are under the limit and refused once they reach it. When several
 * limits refuse, the one that frees last is named: retrying sooner would be refused again.
 */
export function refusalOf(ask: Ask, limits: Limits, used: Used, now: number): Refusal | null {
  const refusals: Refusal[] = [];
  const sessions = limits.sessions_per_day;
  if (ask.sessions && sessions !== null && used.sessions_today + 1 > sessions)
    refusals.push(windowRefusal("sessions_per_day", sessions, used.sessions_today, "day", now));
  const runs = limits.runs_per_minute;
  if (ask.runs && runs !== null && used.runs_this_minute + 1 > runs)
    refusals.push(windowRefusal("runs_per_minute", runs, used.runs_this_minute, "minute", now));
  const tokens = limits.model_tokens_per_day;
  if (ask.runs && tokens !== null && used.tokens_today >= tokens)
    refusals.push(windowRefusal("model_tokens_per_day", tokens, used.tokens_today, "day", now));
  return refusals.reduce<Refusal | null>(
    (last, r) => (last && last.retry_after_s! >= r.retry_after_s! ? last : r),
    null,
  );
}

/** A count limit's refusal (agents, tools): at the limit, a new one is refused until one is deleted. */
export function countRefusal(limit: "agents" | "tools", value: number, used: number): Refusal {
  return { limit, value, used, window: null, retry_after_s: null, resets_at: null };
}

const WHAT: Record<LimitName, string> = {
  requests_per_minute: "requests a minute for this API key",
  sessions_per_day: "sessions a day",
  runs_per_minute: "runs a minute",
  model_tokens_per_day: "model tokens a day",
  agents: "agents",
  tools: "tools",
};

/** The QUOTA_EXCEEDED error of a refusal; its details are what `Retry-After` is made from. */
export function quotaExceeded(refusal: Refusal): ErrorBody {
  const then =
    refusal.resets_at === null
      ? "delete one first, or ask the operator for more"
      : `the window ends at ${refusal.resets_at}`;
  return {
    code: "QUOTA_EXCEEDED",
    message: `Quota exceeded: this tenant may have ${refusal.value} ${WHAT[refusal.limit]} (${refusal.limit}); ${then}.`,
    details: refusal,
  };
}
