import { describe, expect, it } from "vitest";
import { commandAfterValidation, commandOnSessionEnd, recoveryOf } from "../../src/handoff/flow-rules";
import { type Handoff, HandoffStatus } from "../../src/schemas/handoff";

const row = (
  status: HandoffStatus,
  capacity: number | null = null,
  lease: { lease_id: string; fencing_token: number } | null = null,
) => ({
  record: { status } as Handoff,
  capacity,
  lease,
});

describe("whether a handoff waits for its source", () => {
  it.each([
    ["immediate", "busy", "transfer"],
    ["immediate", "idle", "transfer"],
    ["immediate", undefined, "transfer"],
    ["graceful", "busy", "wait"],
    ["graceful", "idle", "transfer"],
    ["graceful", undefined, "transfer"],
    ["conditional", "busy", "wait"],
    ["conditional", "idle", "transfer"],
  ] as const)("%s with the source %s → %s", (policy, turn, expected) => {
    expect(commandAfterValidation(policy, turn)).toBe(expected);
  });
});

describe("what recovery does with a handoff found open after a crash", () => {
  const LEASE = { lease_id: "lse_1", fencing_token: 3 };
  it.each([
    ["initiated", null, null, { command: "fail" }],
    ["validating", 5, null, { command: "fail" }],
    // The grant's outcome is unknown only when the target has a limit and no lease is on record.
    ["transferring", 5, null, { command: "roll_back", release_unknown_lease: true }],
    ["transferring", 5, LEASE, { command: "roll_back", release_unknown_lease: false }],
    ["transferring", null, null, { command: "roll_back", release_unknown_lease: false }],
    ["timed_out", null, null, { command: "finish_timeout" }],
    ["pending", 5, null, { command: "none" }],
    ["completed", 5, LEASE, { command: "none" }],
    ["rolled_back", null, null, { command: "none" }],
  ] as const)("%s (capacity %s, lease %o) → %o", (status, capacity, lease, expected) => {
    expect(recoveryOf(row(status, capacity, lease))).toEqual(expected);
  });
});

describe("what an ending session does with an open handoff", () => {
  it("cancels a pending one and leaves every other status to its flow or recovery", () => {
    for (const status of HandoffStatus.options) {
      expect(commandOnSessionEnd(row(status))).toBe(status === "pending" ? "cancel" : null);
    }
  });
});
