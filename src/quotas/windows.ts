import type { QuotaWindow } from "../schemas/quotas";

/**
 * Quota windows are fixed and aligned to UTC: a minute starts on the minute, a day at
 * midnight UTC. A window's count starts again from zero when the next one begins, so what a
 * refusal asks the caller to wait is the time left in the window.
 */

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

const WINDOW_MS: Record<QuotaWindow, number> = { minute: MINUTE_MS, day: DAY_MS };

/** The start of the window holding `at` (ms since the epoch). */
export function windowStart(window: QuotaWindow, at: number): number {
  return Math.floor(at / WINDOW_MS[window]) * WINDOW_MS[window];
}

/** The end of the window holding `at`: the start of the next. */
export function windowEnd(window: QuotaWindow, at: number): number {
  return windowStart(window, at) + WINDOW_MS[window];
}

/** Whole seconds from `at` to the end of its window, at least 1 (what `Retry-After` says). */
export function retryAfterS(window: QuotaWindow, at: number): number {
  return Math.max(1, Math.ceil((windowEnd(window, at) - at) / 1000));
}

/** The hour holding `at`, as hours since the epoch (usage is kept per hour). */
export function hourOf(at: number): number {
  return Math.floor(at / HOUR_MS);
}
