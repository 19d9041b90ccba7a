import { resumeAt } from "../../../src/runtime/run-deadlines";
import type { TimerHandlers } from "../../shared/timers";
import type { SessionEndHook } from "../session-lifecycle";
import type { SessionRuns } from "./session-runs";

/**
 * The run feature's timers — the watchdog that resumes a run whose loop died with its
 * instance, a paused run's deadline for tool outputs, and an inbox item's expiry — and its part in the
 * end of a session (the run
 * fails, open inbox items are cancelled).
 */
export function runTimers(runs: SessionRuns): TimerHandlers {
  return {
    "run.resume": async (_timer, now) => {
      // While this instance's loop drives the run (a step past its deadline), the watchdog looks again soon.
      return (await runs.resumeOrphan()) === "driving" ? { type: "again", at: resumeAt(now) } : { type: "done" };
    },
    "run.outputs_expire": async (timer) => {
      await runs.expireToolOutputs(timer.payload.run_id);
      return { type: "done" };
    },
    "inbox.expire": async (timer) => {
      await runs.inbox.expireItem(timer.payload.inbox_id);
      return { type: "done" };
    },
  };
}

export function runEndHook(runs: SessionRuns): SessionEndHook {
  return {
    onEnd(session, now, reason) {
      runs.onSessionEnd(session, now, reason);
      return session;
    },
    settle: async () => true,
  };
}
