import { AgentResult, type Fanout, type FanoutState, type TaskDecomposition } from "../schemas/collaboration";

/**
 * Supervisor fan-out, pure: the states as a table, results taken as
 * they come, and the rule that ends a fan-out. The session's object runs the tasks (each
 * its own sub-run with a timeout) and records each step.
 *
 * The rule: a fan-out ends when every task has a result — a success, a failure, or a
 * timeout (recorded as a failure with error `TASK_TIMEOUT`). It is aggregated and
 * COMPLETED when at least one task succeeded and none timed out (failures are named in the
 * aggregate); it is FAILED, with every result so far kept, when a task timed out or no task
 * succeeded.
 */

export const FANOUT_TRANSITIONS: Readonly<Record<FanoutState, readonly FanoutState[]>> = {
  INIT: ["DECOMPOSED", "FAILED"],
  DECOMPOSED: ["EXECUTING", "FAILED"],
  EXECUTING: ["AGGREGATING", "FAILED"],
  AGGREGATING: ["COMPLETED", "FAILED"],
  COMPLETED: [],
  FAILED: [],
};

export const canMove = (from: FanoutState, to: FanoutState): boolean => FANOUT_TRANSITIONS[from].includes(to);

/** The fan-out in its next state, by the table (a refused move is a bug: the ending rule decides). */
export function moveFanout(fanout: Fanout, to: FanoutState, now: number): Fanout {
  if (!canMove(fanout.state, to)) throw new Error(`fan-out ${fanout.id}: ${fanout.state} → ${to} is not a transition`);
  return { ...fanout, state: to, states: [...fanout.states, { state: to, at: new Date(now).toISOString() }] };
}

export const TASK_TIMEOUT = "TASK_TIMEOUT";

export type ResultAdmission = { ok: true; results: AgentResult[] } | { ok: false; reason: string };

/** Takes a result as it comes: valid, for a task of the decomposition, its agent's, the first for its task. */
export function admitResult(
  decomposition: TaskDecomposition,
  results: readonly AgentResult[],
  raw: unknown,
): ResultAdmission {
  const parsed = AgentResult.safeParse(raw);
  if (!parsed.success)
    return {
      ok: false,
      reason: parsed.error.issues.map((i) => `${i.path.join(".") || "result"}: ${i.message}`).join("; "),
    };
  const result = parsed.data;
  const task = decomposition.tasks.find((t) => t.task_id === result.task_id);
  if (!task) return { ok: false, reason: `no task '${result.task_id}' in the decomposition` };
  if (task.agent !== result.agent)
    return { ok: false, reason: `task '${result.task_id}' is '${task.agent}''s, not '${result.agent}''s` };
  if (results.some((r) => r.task_id === result.task_id))
    return { ok: false, reason: `task '${result.task_id}' already has a result` };
  return { ok: true, results: [...results, result] };
}

/** The tasks still without a result. */
export function pendingTasks(decomposition: TaskDecomposition, results: readonly AgentResult[]): string[] {
  const done = new Set(results.map((r) => r.task_id));
  return decomposition.tasks.filter((t) => !done.has(t.task_id)).map((t) => t.task_id);
}

/** Where a fan-out goes once every task has a result (null: some are still out). */
export function outcomeOf(
  decomposition: TaskDecomposition,
  results: readonly AgentResult[],
): "AGGREGATING" | "FAILED" | null {
  if (pendingTasks(decomposition, results).length > 0) return null;
  const timedOut = results.some((r) => !r.success && r.error === TASK_TIMEOUT);
  return !timedOut && results.some((r) => r.success) ? "AGGREGATING" : "FAILED";
}

/**
 * The aggregate Relay writes when the supervisor does not (offline, or as the model's
 * input): each task's answer in decomposition order, then what failed.
 */
export function aggregate(decomposition: TaskDecomposition, results: readonly AgentResult[]): string {
  const byTask = new Map(results.map((r) => [r.task_id, r]));
  const answered = decomposition.tasks.flatMap((t) => {
    const r = byTask.get(t.task_id);
    return r?.success ? [`${t.agent}: ${typeof r.data === "string" ? r.data : JSON.stringify(r.data)}`] : [];
  });
  const failed = decomposition.tasks.flatMap((t) => {
    const r = byTask.get(t.task_id);
    return r && !r.success ? [`${t.agent} (${r.error})`] : [];
  });
  return [...answered, ...(failed.length > 0 ? [`Not answered: ${failed.join(", ")}.`] : [])].join("\n");
}
