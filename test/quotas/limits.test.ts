import { describe, expect, it } from "vitest";
import { BUILT_IN_LIMITS, effectiveLimits, limitsFromVars } from "../../src/quotas/limits";

describe("limitsFromVars", () => {
  it("takes whole numbers and 'unlimited', and keeps the built-in default of an unset var", () => {
    const { limits, warnings } = limitsFromVars({
      QUOTA_SESSIONS_PER_DAY: "50",
      QUOTA_RUNS_PER_MINUTE: " unlimited ",
      QUOTA_AGENTS: "0",
      QUOTA_TOOLS: "",
    });
    expect(warnings).toEqual([]);
    expect(limits).toEqual({ ...BUILT_IN_LIMITS, sessions_per_day: 50, runs_per_minute: null, agents: 0 });
  });

  it("reports a var that does not parse and keeps the default in its place", () => {
    const { limits, warnings } = limitsFromVars({
      QUOTA_MODEL_TOKENS_PER_DAY: "1e6",
      QUOTA_REQUESTS_PER_MINUTE: "-5",
      QUOTA_TOOLS: "99999999999999",
    });
    expect(limits).toEqual(BUILT_IN_LIMITS);
    expect(warnings).toEqual([
      `QUOTA_REQUESTS_PER_MINUTE="-5" ignored: must be a whole number or 'unlimited'`,
      `QUOTA_MODEL_TOKENS_PER_DAY="1e6" ignored: must be a whole number or 'unlimited'`,
      `QUOTA_TOOLS="99999999999999" ignored: must be a whole number or 'unlimited'`,
    ]);
  });
});

describe("effectiveLimits", () => {
  it("puts each override in place of its default, null meaning no limit, and says which is which", () => {
    const { limits, sources } = effectiveLimits(BUILT_IN_LIMITS, { runs_per_minute: 2, tools: null });
    expect(limits).toEqual({ ...BUILT_IN_LIMITS, runs_per_minute: 2, tools: null });
    expect(sources).toEqual({
      requests_per_minute: "default",
      sessions_per_day: "default",
      runs_per_minute: "override",
      model_tokens_per_day: "default",
      agents: "default",
      tools: "override",
    });
  });
});
