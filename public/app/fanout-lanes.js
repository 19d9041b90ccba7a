// A supervisor fan-out (docs/collaboration.md, Supervisor fan-out) as parallel lanes: one
// per task, with its agent, state, duration and timeout, on one time scale. Pure: no DOM.

/** The error a task that ran out of time ends with. */
export const TASK_TIMEOUT = "TASK_TIMEOUT";

const ENDED = new Set(["COMPLETED", "FAILED"]);

/**
 * `{ lanes, scale, ended, aggregate }`: a lane per task in the decomposition's order with
 * `state` (`running`, `succeeded`, `failed`, `timed_out`, or `not run` for a task a finished
 * fan-out has no result for), its `ms` (so far, while running), `timeout_ms` and `error`;
 * `scale` the ms the lanes' width stands for (the longest lane, or a running lane's timeout).
 */
export function fanoutLanes(fanout, now = Date.now()) {
  const started = Date.parse(fanout.started_at);
  const ended = ENDED.has(fanout.state);
  const results = new Map(fanout.results.map((r) => [r.task_id, r]));
  const lanes = fanout.decomposition.tasks.map((task) => {
    const result = results.get(task.task_id);
    const timeout_ms = task.timeout_s * 1000;
    if (!result)
      return {
        task_id: task.task_id,
        agent: task.agent,
        instruction: task.instruction,
        state: ended ? "not run" : "running",
        ms: ended ? 0 : Math.max(0, now - started),
        timeout_ms,
        error: null,
        output: null,
      };
    return {
      task_id: task.task_id,
      agent: task.agent,
      instruction: task.instruction,
      state: result.success ? "succeeded" : result.error === TASK_TIMEOUT ? "timed_out" : "failed",
      ms: result.execution_time,
      timeout_ms,
      error: result.success ? null : result.error,
      output: result.success ? (typeof result.data === "string" ? result.data : JSON.stringify(result.data)) : null,
    };
  });
  const longest = Math.max(1, ...lanes.map((l) => l.ms));
  // While a task runs, the scale reaches its timeout, so the bar grows towards a fixed line.
  const running = lanes.filter((l) => l.state === "running").map((l) => l.timeout_ms);
  const scale = running.length ? Math.max(longest, ...running) : longest;
  return {
    lanes,
    scale,
    ended,
    aggregate: fanout.response,
    ms: (fanout.ended_at ? Date.parse(fanout.ended_at) : now) - started,
  };
}

/** Why a fan-out has no aggregate, in a sentence (null when it has one, or is not over). */
export function noAggregateReason(fanout) {
  if (fanout.response !== null || !ENDED.has(fanout.state)) return null;
  const timedOut = fanout.results.filter((r) => r.error === TASK_TIMEOUT).map((r) => r.task_id);
  if (timedOut.length) return `No aggregate: ${timedOut.join(", ")} ran out of time, so the fan-out failed.`;
  if (!fanout.results.some((r) => r.success)) return "No aggregate: no task succeeded.";
  return "No aggregate.";
}
