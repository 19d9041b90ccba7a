import type { HistoryItem } from "../schemas/handoff";
import type { PendingCall, TurnWork } from "../schemas/run";
import { handoffOutput } from "./interpret";
import type { RunStep } from "./run-record";
import { withCallsDone } from "./tool-work";

/**
 * What a restart leaves of a run's step under way, pure (docs/runs.md, Running agents): the answers the
 * interrupted calls get, so the history stays well-formed, and the work that goes on.
 *
 * With work: http calls that may have run are answered "interrupted" (never repeated: they
 * may have had effects), and a handoff under way is answered by where the session is now;
 * the rest of the work goes on. Without (a run from before work was kept): every
 * unanswered call of the last response is answered.
 */
/**
 * The turns a resumed run has taken: a turn a restart interrupted was not taken (it is taken
 * again, under the same number, so its webhook delivery keeps its id and `max_turns` counts
 * turns, not attempts).
 */
export function turnsTaken(turns: number, step: RunStep | null): number {
  return step === "turn" ? Math.max(0, turns - 1) : turns;
}

export function interruptedStep(input: {
  work: TurnWork | null;
  step: RunStep | null;
  /** The session's current agent: a transfer or return that got there is answered as done. */
  current_agent: string;
  /** The conversation, read only for a run that kept no work. */
  history: () => readonly HistoryItem[];
}): { answers: HistoryItem[]; work: TurnWork | null } {
  const interrupted = (agent: string, call: PendingCall): HistoryItem => ({
    role: "tool",
    agent,
    type: "tool_output",
    tool_name: call.name,
    tool_call_id: call.id,
    content: "Error: interrupted by a restart; call it again if it is still needed.",
  });
  const handedOver = (agent: string, call: PendingCall) =>
    input.current_agent !== agent && (call.name.startsWith("transfer_to_") || call.name.startsWith("return_to_"));
  const answer = (agent: string, call: PendingCall) =>
    handedOver(agent, call)
      ? handoffOutput(agent, call, { ok: true, target: input.current_agent })
      : interrupted(agent, call);
  const work = input.work;
  if (work) {
    const answers: HistoryItem[] = [];
    let next = work;
    if (input.step === "tools") {
      const ran = work.calls.filter(
        (c) => c.kind === "http" && !c.done && (c.approval === "none" || c.approval === "approved"),
      );
      answers.push(...ran.map((c) => interrupted(work.agent, c)));
      next = withCallsDone(work, new Set(ran.map((c) => c.id)));
    }
    if (input.step === "handoff" && work.handoff) {
      answers.push(answer(work.agent, work.handoff));
      next = { ...next, handoff: null };
    }
    return { answers, work: next };
  }
  const history = input.history();
  const answered = new Set(history.filter((i) => i.role === "tool").map((i) => i.tool_call_id));
  const last = history.findLast((i) => i.role === "assistant" && i.tool_calls?.length);
  if (!last?.tool_calls || !last.agent) return { answers: [], work: null };
  const agent = last.agent;
  return { answers: last.tool_calls.filter((c) => !answered.has(c.id)).map((call) => answer(agent, call)), work: null };
}
