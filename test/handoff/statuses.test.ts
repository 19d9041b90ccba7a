import { describe, expect, it } from "vitest";
import { allowedCommands } from "../../src/handoff/state-machine";
import {
  HANDOFF_STATUSES,
  isOpen,
  isOrphanable,
  OPEN_STATUSES,
  ORPHANABLE_STATUSES,
  sqlList,
  TERMINAL_STATUSES,
} from "../../src/handoff/statuses";
import { HandoffStatus } from "../../src/schemas/handoff";

describe("handoff statuses: one source", () => {
  it("the zod enum is the list, in lifecycle order", () => {
    expect(HandoffStatus.options).toEqual(HANDOFF_STATUSES);
    expect(HANDOFF_STATUSES).toEqual([
      "initiated",
      "validating",
      "pending",
      "transferring",
      "completed",
      "failed",
      "rolled_back",
      "timed_out",
      "cancelled",
      "escalated",
    ]);
  });

  it("open, orphan-able and terminal partition it as the lock and recovery need", () => {
    expect(OPEN_STATUSES).toEqual(["initiated", "validating", "pending", "transferring", "timed_out"]);
    expect(ORPHANABLE_STATUSES).toEqual(["initiated", "validating", "transferring", "timed_out"]);
    expect(TERMINAL_STATUSES).toEqual(["completed", "failed", "rolled_back", "cancelled", "escalated"]);
    expect([...OPEN_STATUSES, ...TERMINAL_STATUSES].sort()).toEqual([...HANDOFF_STATUSES].sort());
    for (const status of HANDOFF_STATUSES) {
      expect(isOpen(status)).toBe(OPEN_STATUSES.includes(status));
      expect(isOrphanable(status)).toBe(ORPHANABLE_STATUSES.includes(status));
    }
  });

  it("terminal statuses accept no command in the transition table; every other accepts one", () => {
    for (const status of HANDOFF_STATUSES)
      expect(allowedCommands(status).length === 0).toBe(TERMINAL_STATUSES.includes(status));
  });

  it("renders an SQL list for CHECK constraints and filters", () => {
    expect(sqlList(["pending", "failed"])).toBe("('pending', 'failed')");
  });
});
