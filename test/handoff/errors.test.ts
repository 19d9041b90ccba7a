import { describe, expect, it } from "vitest";
import { ERROR_STATUS } from "../../src/errors";
import { handoffErrors } from "../../src/handoff/errors";

describe("handoff error constructors", () => {
  it("word the Durable Objects' own refusals", () => {
    expect(handoffErrors.agentUnavailable("billing", "at_capacity", { max_concurrent_sessions: 3 })).toEqual({
      code: "AGENT_UNAVAILABLE",
      message: "'billing' cannot take the session now (at capacity).",
      details: { agent: "billing", reason: "at_capacity", max_concurrent_sessions: 3 },
    });
    expect(handoffErrors.inProgress("s1", "h1", "pending")).toEqual({
      code: "HANDOFF_IN_PROGRESS",
      message: "Session 's1' already has handoff 'h1' in flight (pending).",
      details: { session_id: "s1", handoff_id: "h1", status: "pending" },
    });
  });

  it("use only codes the HTTP layer knows, with the statuses the design gives", () => {
    const bodies = [
      handoffErrors.agentNotFound("x", "target"),
      handoffErrors.notCurrentAgent("x", null),
      handoffErrors.notAllowed("a", "b", []),
      handoffErrors.wrongReturnTarget("a", "b", "c"),
      handoffErrors.conditionNotMet("x", "request", {}),
      handoffErrors.conditionRequired(),
      handoffErrors.maxDepthExceeded(["a", "b"], 0),
      handoffErrors.circular(["a", "b", "a"], "a"),
      handoffErrors.capabilityMismatch(["x"], []),
      handoffErrors.nothingToReturn(["a"]),
      handoffErrors.agentUnavailable("a", "paused"),
      handoffErrors.inProgress("s", "h", "transferring"),
    ];
    expect(bodies.map((b) => [b.code, ERROR_STATUS[b.code]])).toEqual([
      ["AGENT_NOT_FOUND", 404],
      ["NOT_CURRENT_AGENT", 409],
      ["HANDOFF_NOT_ALLOWED", 422],
      ["HANDOFF_NOT_ALLOWED", 422],
      ["CONDITION_NOT_MET", 422],
      ["VALIDATION_FAILED", 400],
      ["MAX_DEPTH_EXCEEDED", 422],
      ["CIRCULAR_HANDOFF", 422],
      ["CAPABILITY_MISMATCH", 422],
      ["NOTHING_TO_RETURN", 422],
      ["AGENT_UNAVAILABLE", 422],
      ["HANDOFF_IN_PROGRESS", 409],
    ]);
    expect(handoffErrors.notCurrentAgent("x", null).message).toContain("no current agent");
    expect(handoffErrors.notAllowed("a", "b", []).message).toBe("'a' may not hand off to anyone.");
  });
});
