import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Ask, Used } from "../../src/quotas/admission";
import { LEASE_MS, LEASE_SHARE, leaseOf, leaseWanted, MAX_LEASE } from "../../src/quotas/lease";
import { BUILT_IN_LIMITS } from "../../src/quotas/limits";
import { HOUR_MS, hourOf, MINUTE_MS, windowEnd } from "../../src/quotas/windows";

/** Admission leases' terms (src/quotas/lease.ts): how many an isolate asks for, and what is granted. */

const at = (iso: string) => Date.parse(iso);
const now = at("2026-03-04T10:20:30.000Z");
const open = { ...BUILT_IN_LIMITS, sessions_per_day: null, runs_per_minute: null, model_tokens_per_day: null };
const none: Used = { sessions_today: 0, runs_this_minute: 0, tokens_today: 0 };
const sessions: Ask = { sessions: true };
const runs: Ask = { runs: true };

describe("leaseWanted", () => {
  it("asks for the other asks of the last second, none for a lone one, at most MAX_LEASE", () => {
    expect(leaseWanted(0)).toBe(0);
    expect(leaseWanted(1)).toBe(0);
    expect(leaseWanted(2)).toBe(1);
    expect(leaseWanted(MAX_LEASE + 1)).toBe(MAX_LEASE);
    expect(leaseWanted(1000)).toBe(MAX_LEASE);
  });
});

describe("leaseOf", () => {
  it("grants what is wanted under no limit, for LEASE_MS", () => {
    expect(leaseOf(sessions, 5, open, none, now)).toEqual({ count: 5, ms: LEASE_MS, tokens: null });
    expect(leaseOf(runs, 100, open, none, now)).toEqual({ count: MAX_LEASE, ms: LEASE_MS, tokens: null });
    expect(leaseOf(sessions, 0, open, none, now)).toBeNull();
    expect(leaseOf({}, 5, open, none, now)).toBeNull();
  });

  it("grants at most an eighth of each applicable limit's headroom after the ask", () => {
    const limits = { ...open, sessions_per_day: 200, runs_per_minute: 100 };
    // 200 - 40 = 160 left: 20.
    expect(leaseOf(sessions, 32, limits, { ...none, sessions_today: 40 }, now)?.count).toBe(20);
    // Runs are limited by the minute's runs, not the day's sessions.
    expect(leaseOf(runs, 32, limits, { ...none, sessions_today: 199, runs_this_minute: 60 }, now)?.count).toBe(5);
    // A new conversation is counted against both: the tighter one decides.
    const both = { ...none, sessions_today: 120, runs_this_minute: 20 };
    expect(leaseOf({ sessions: true, runs: true }, 32, limits, both, now)?.count).toBe(10);
  });

  it("grants nothing to a tenant near its limit: its asks are decided one by one", () => {
    const limits = { ...open, sessions_per_day: 3, runs_per_minute: 20 };
    for (let used = 0; used <= 3; used++)
      expect(leaseOf(sessions, MAX_LEASE, limits, { ...none, sessions_today: used }, now)).toBeNull();
    expect(leaseOf(runs, MAX_LEASE, limits, { ...none, runs_this_minute: 13 }, now)).toBeNull();
    expect(leaseOf(runs, MAX_LEASE, limits, { ...none, runs_this_minute: 12 }, now)?.count).toBe(1);
  });

  it("grants runs only while more than an eighth of the day's tokens is left, and says how many", () => {
    const limits = { ...open, model_tokens_per_day: 800 };
    expect(leaseOf(runs, 4, limits, { ...none, tokens_today: 699 }, now)).toEqual({
      count: 4,
      ms: LEASE_MS,
      tokens: 101,
    });
    expect(leaseOf(runs, 4, limits, { ...none, tokens_today: 700 }, now)).toBeNull();
    // Tokens do not limit sessions.
    expect(leaseOf(sessions, 4, limits, { ...none, tokens_today: 800 }, now)).toEqual({
      count: 4,
      ms: LEASE_MS,
      tokens: null,
    });
  });

  it("never lets a lease of runs cross into the next minute", () => {
    const late = at("2026-03-04T10:20:59.400Z");
    expect(leaseOf(runs, 4, open, none, late)?.ms).toBe(600);
    expect(leaseOf(runs, 4, open, none, at("2026-03-04T10:20:59.999Z"))?.ms).toBe(1);
    // Sessions' window is the day: the minute does not cut their lease.
    expect(leaseOf(sessions, 4, open, none, late)?.ms).toBe(LEASE_MS);
  });

  it("never lets a lease cross into the next hour (its row) or day", () => {
    expect(leaseOf(sessions, 4, open, none, at("2026-03-04T10:59:59.750Z"))?.ms).toBe(250);
    expect(leaseOf(sessions, 4, open, none, at("2026-03-04T23:59:59.900Z"))?.ms).toBe(100);
  });

  it("holds, for any use and time: within the limits with the ask, within its windows, at most wanted", () => {
    const limit = fc.option(fc.integer({ min: 0, max: 10_000 }), { nil: null });
    fc.assert(
      fc.property(
        fc.record({ sessions: fc.boolean(), runs: fc.boolean() }),
        fc.integer({ min: 0, max: 100 }),
        fc.record({ sessions_per_day: limit, runs_per_minute: limit, model_tokens_per_day: limit }),
        fc.record({
          sessions_today: fc.integer({ min: 0, max: 10_000 }),
          runs_this_minute: fc.integer({ min: 0, max: 10_000 }),
          tokens_today: fc.integer({ min: 0, max: 10_000 }),
        }),
        fc.integer({ min: 0, max: 10 * 24 * HOUR_MS }),
        (ask, wanted, some, used, offset) => {
          const t = now + offset;
          const limits = { ...BUILT_IN_LIMITS, ...some };
          const lease = leaseOf(ask, wanted, limits, used, t);
          if (!lease) return;
          expect(lease.count).toBeGreaterThan(0);
          expect(lease.count).toBeLessThanOrEqual(Math.min(wanted, MAX_LEASE));
          // An eighth of what is left: the lease with the ask stays under the limit, with room to spare.
          const within = (limit: number | null, use: number) =>
            limit === null || lease.count * LEASE_SHARE <= limit - use;
          if (ask.sessions) expect(within(limits.sessions_per_day, used.sessions_today)).toBe(true);
          if (ask.runs) expect(within(limits.runs_per_minute, used.runs_this_minute)).toBe(true);
          expect(lease.ms).toBeGreaterThan(0);
          expect(lease.ms).toBeLessThanOrEqual(LEASE_MS);
          expect(hourOf(t + lease.ms - 1)).toBe(hourOf(t));
          if (ask.runs) expect(t + lease.ms).toBeLessThanOrEqual(windowEnd("minute", t));
          if (ask.runs) expect(Math.floor((t + lease.ms - 1) / MINUTE_MS)).toBe(Math.floor(t / MINUTE_MS));
        },
      ),
    );
  });
});
