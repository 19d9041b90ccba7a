import { describe, expect, it } from "vitest";
import { keepsOutcome } from "../../src/handoff/idempotency";

describe("what an Idempotency-Key keeps", () => {
  it("keeps successes and refusals on the request's merits", () => {
    expect(keepsOutcome({ ok: true, value: { accepted: false } })).toBe(true);
    expect(keepsOutcome({ ok: false, error: { code: "NOT_CURRENT_AGENT", message: "" } })).toBe(true);
    expect(keepsOutcome({ ok: false, error: { code: "AGENT_UNAVAILABLE", message: "" } })).toBe(true);
  });

  it("does not keep the server's faults: a restart's rollback, an internal error, a dependency down", () => {
    expect(keepsOutcome({ ok: false, error: { code: "INTERNAL", message: "" } })).toBe(false);
    expect(keepsOutcome({ ok: false, error: { code: "DEPENDENCY_UNAVAILABLE", message: "" } })).toBe(false);
  });
});
