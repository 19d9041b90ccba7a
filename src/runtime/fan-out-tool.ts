import type { Result } from "../errors";
import { type Fanout, TaskDecomposition } from "../schemas/collaboration";

/**
 * A supervisor's `fan_out` tool call in a run (`tools.allow` names it), pure: the call's
 * arguments as a task decomposition, and the fan-out's end as the call's output. The
 * session's fan-out feature runs the tasks in between.
 */

/** `{ tasks: [{ agent, instruction }] }` as a decomposition (tasks numbered in order), or null when it is not one. */
export function fanOutCallTasks(args: string): TaskDecomposition | null {
  let parsed: { tasks?: { agent: string; instruction: string }[] };
  try {
    parsed = JSON.parse(args || "{}") as typeof parsed;
  } catch {
    return null;
  }
  const tasks = (parsed.tasks ?? []).map((t, i) => ({
    task_id: `task_${i + 1}`,
    agent: t.agent,
    instruction: t.instruction,
  }));
  const decomposition = TaskDecomposition.safeParse({
    original_query: tasks.map((t) => t.instruction).join("\n"),
    tasks,
  });
  return decomposition.success ? decomposition.data : null;
}

/** The call's output: the aggregate of a completed fan-out; else what was refused or failed, and what came back. */
export function fanOutCallOutput(result: Result<Fanout>): { ok: boolean; output: string } {
  if (!result.ok)
    return { ok: false, output: `Error: the fan-out was refused (${result.error.code}): ${result.error.message}` };
  const f = result.value;
  if (f.state === "COMPLETED") return { ok: true, output: f.response ?? "" };
  const failed = f.results.filter((r) => !r.success).map((r) => `${r.agent}: ${r.error}`);
  const came = f.results.filter((r) => r.success).map((r) => ({ agent: r.agent, data: r.data }));
  return {
    ok: false,
    output: `Error: the fan-out failed (${failed.join(", ")}). What came back: ${JSON.stringify(came)}`,
  };
}
