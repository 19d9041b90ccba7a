import type { HandoffPolicy } from "../schemas/handoff";
import type { AgentTurnStatus } from "../schemas/session";
import type { HandoffRow } from "./record";
import type { HandoffCommand } from "./state-machine";

/**
 * What the handoff flow decides, as functions of data. The SessionDO loads the facts,
 * asks here, and carries the answer out; the rules are table-tested in
 * test/handoff/flow-rules.test.ts.
 */

/**
 * After validation: an immediate handoff transfers at once (interrupting the source); a
 * graceful or conditional one waits while the source reports its turn `busy`.
 */
export function commandAfterValidation(
  policy: HandoffPolicy,
  sourceTurn: AgentTurnStatus | undefined,
): "wait" | "transfer" {
  return policy !== "immediate" && sourceTurn === "busy" ? "wait" : "transfer";
}

/** What recovery does with a handoff a crash left in a running status. */
export type Recovery =
  /** Nothing had changed yet: fail it. */
  | { command: "fail" }
  /**
   * Before the switch: roll back. `release_unknown_lease` when a lease may have been
   * granted without the grant being recorded (the target has a limit and no lease is on
   * record), so whatever the session holds at the target is freed.
   */
  | { command: "roll_back"; release_unknown_lease: boolean }
  /** The deadline passed and the follow-up did not commit: finish it as `on_timeout` says. */
  | { command: "finish_timeout" }
  /** Not an orphan (waiting or finished): leave it. */
  | { command: "none" };

export function recoveryOf(row: Pick<HandoffRow, "record" | "capacity" | "lease">): Recovery {
  switch (row.record.status) {
    case "initiated":
    case "validating":
      return { command: "fail" };
    case "transferring":
      return { command: "roll_back", release_unknown_lease: row.capacity !== null && row.lease === null };
    case "timed_out":
      return { command: "finish_timeout" };
    default:
      return { command: "none" };
  }
}

/** The command that ends a handoff found open when its session ends (deleted or expired). */
export function commandOnSessionEnd(row: Pick<HandoffRow, "record">): Extract<HandoffCommand, "cancel"> | null {
  return row.record.status === "pending" ? "cancel" : null;
}
