import { describe, expect, it } from "vitest";
import { afterFailure, RETRY_DELAYS_MS, unreadableSubscriptionRetryAt } from "../../src/audit/delivery-schedule";

describe("the retry schedule of lifecycle notifications", () => {
  it("retries after each delay in turn, counting the attempt just made", () => {
    const now = 1_000_000;
    expect(afterFailure(0, now)).toEqual({ type: "retry", attempts: 1, at: now + 5_000 });
    expect(afterFailure(1, now)).toEqual({ type: "retry", attempts: 2, at: now + 30_000 });
    expect(afterFailure(4, now)).toEqual({ type: "retry", attempts: 5, at: now + 3_600_000 });
  });

  it("gives up after the first attempt and one retry per delay", () => {
    expect(RETRY_DELAYS_MS).toHaveLength(5);
    expect(afterFailure(RETRY_DELAYS_MS.length, 0)).toEqual({ type: "give_up", attempts: 6 });
    expect(afterFailure(9, 0)).toEqual({ type: "give_up", attempts: 10 });
  });

  it("an unreadable subscription is asked again after the first delay", () => {
    expect(unreadableSubscriptionRetryAt(10)).toBe(10 + RETRY_DELAYS_MS[0]);
  });
});
