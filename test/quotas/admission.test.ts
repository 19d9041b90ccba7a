import { describe, expect, it } from "vitest";
import { countRefusal, quotaExceeded, refusalOf } from "../../src/quotas/admission";
import { BUILT_IN_LIMITS } from "../../src/quotas/limits";
import { hourOf, retryAfterS, windowEnd, windowStart } from "../../src/quotas/windows";

const at = (iso: string) => Date.parse(iso);
const limits = { ...BUILT_IN_LIMITS, sessions_per_day: 3, runs_per_minute: 2, model_tokens_per_day: 1000 };
const none = { sessions_today: 0, runs_this_minute: 0, tokens_today: 0 };

describe("windows", () => {
  it("are fixed and aligned to UTC", () => {
    const now = at("2026-03-04T10:20:30.250Z");
    expect(new Date(windowStart("minute", now)).toISOString()).toBe("2026-03-04T10:20:00.000Z");
    expect(new Date(windowEnd("minute", now)).toISOString()).toBe("2026-03-04T10:21:00.000Z");
    expect(new Date(windowStart("day", now)).toISOString()).toBe("2026-03-04T00:00:00.000Z");
    expect(new Date(windowEnd("day", now)).toISOString()).toBe("2026-03-05T00:00:00.000Z");
    expect(hourOf(now)).toBe(Math.floor(now / 3_600_000));
  });

  it("ask the caller to wait the whole seconds left, never less than one", () => {
    expect(retryAfterS("minute", at("2026-03-04T10:20:30.250Z"))).toBe(30);
    expect(retryAfterS("minute", at("2026-03-04T10:20:59.999Z"))).toBe(1);
    expect(retryAfterS("minute", at("2026-03-04T10:20:00.000Z"))).toBe(60);
    expect(retryAfterS("day", at("2026-03-04T23:00:00.000Z"))).toBe(3600);
  });
});

describe("refusalOf", () => {
  const now = at("2026-03-04T10:20:30.000Z");

  it("admits what is under every limit", () => {
    expect(refusalOf({ sessions: true, runs: true }, limits, { ...none, sessions_today: 2 }, now)).toBeNull();
    expect(refusalOf({ runs: true }, limits, { ...none, runs_this_minute: 1, tokens_today: 999 }, now)).toBeNull();
  });

  it("refuses a session past the day's sessions, until midnight UTC", () => {
    expect(refusalOf({ sessions: true }, limits, { ...none, sessions_today: 3 }, now)).toEqual({
      limit: "sessions_per_day",
      value: 3,
      used: 3,
      window: "day",
      retry_after_s: 13 * 3600 + 39 * 60 + 30,
      resets_at: "2026-03-05T00:00:00.000Z",
    });
  });

  it("refuses a run past the minute's runs, until the next minute", () => {
    expect(refusalOf({ runs: true }, limits, { ...none, runs_this_minute: 2 }, now)).toMatchObject({
      limit: "runs_per_minute",
      retry_after_s: 30,
      resets_at: "2026-03-04T10:21:00.000Z",
    });
  });

  it("refuses the next run once the day's tokens reach the limit (a run is admitted while under it)", () => {
    expect(refusalOf({ runs: true }, limits, { ...none, tokens_today: 1000 }, now)).toMatchObject({
      limit: "model_tokens_per_day",
      used: 1000,
    });
    // Tokens do not limit sessions.
    expect(refusalOf({ sessions: true }, limits, { ...none, tokens_today: 5000 }, now)).toBeNull();
  });

  it("names the limit that frees last when several refuse", () => {
    const used = { sessions_today: 0, runs_this_minute: 2, tokens_today: 1000 };
    expect(refusalOf({ runs: true }, limits, used, now)?.limit).toBe("model_tokens_per_day");
    expect(refusalOf({ runs: true }, limits, { ...used, tokens_today: 0 }, now)?.limit).toBe("runs_per_minute");
  });

  it("refuses everything at a limit of 0, and nothing at no limit", () => {
    expect(refusalOf({ sessions: true }, { ...limits, sessions_per_day: 0 }, none, now)?.limit).toBe(
      "sessions_per_day",
    );
    const open = { ...limits, sessions_per_day: null, runs_per_minute: null, model_tokens_per_day: null };
    expect(
      refusalOf(
        { sessions: true, runs: true },
        open,
        { sessions_today: 1e9, runs_this_minute: 1e9, tokens_today: 1e9 },
        now,
      ),
    ).toBeNull();
  });
});

describe("quotaExceeded", () => {
  it("names the limit, its value and when it frees", () => {
    const body = quotaExceeded(
      refusalOf({ runs: true }, limits, { ...none, runs_this_minute: 2 }, at("2026-03-04T10:20:30Z"))!,
    );
    expect(body.code).toBe("QUOTA_EXCEEDED");
    expect(body.message).toBe(
      "Quota exceeded: this tenant may have 2 runs a minute (runs_per_minute); the window ends at 2026-03-04T10:21:00.000Z.",
    );
    expect(body.details).toMatchObject({ limit: "runs_per_minute", value: 2, retry_after_s: 30 });
  });

  it("tells a count's refusal that waiting frees nothing", () => {
    const body = quotaExceeded(countRefusal("agents", 5, 5));
    expect(body.message).toMatch(/5 agents \(agents\); delete one first/);
    expect(body.details).toEqual({
      limit: "agents",
      value: 5,
      used: 5,
      window: null,
      retry_after_s: null,
      resets_at: null,
    });
  });
});
