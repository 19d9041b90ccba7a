import type { HistoryItem } from "../schemas/handoff";
import { CALL_RUNNER, type PendingCall, type Run, type TraceEvent, type TurnWork } from "../schemas/run";
import { handoffOutput } from "./interpret";
import { type RunStep, traceArgs, traceEvent } from "./run-record";
import { withCallsDone } from "./tool-work";

/**
 * What a restart leaves of a run's step under way, pure (docs/runs.md, Running agents): the answers the
 * interrupted calls get, so the history stays well-formed, and the work that goes on.
 *
 * With work: every call Relay makes (CALL_RUNNER: http and MCP tools, messages to other
 * agents, a fan-out) that may have run is answered "interrupted" — never made again, since
 * it may have had effects — and a handoff under way is answered by where the session is
 * now; the rest of the work goes on. Without (a run from before work was kept): every
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
}): { answers: HistoryItem[]; work: TurnWork | null; interrupted: { agent: string; call: PendingCall }[] } {
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
    let ran: PendingCall[] = [];
    if (input.step === "tools") {
      ran = work.calls.filter(
        (c) => CALL_RUNNER[c.kind] === "relay" && !c.done && (c.approval === "none" || c.approval === "approved"),
      );
      answers.push(...ran.map((c) => interrupted(work.agent, c)));
      next = withCallsDone(work, new Set(ran.map((c) => c.id)));
    }
    if (input.step === "handoff" && work.handoff) {
      answers.push(answer(work.agent, work.handoff));
      next = { ...next, handoff: null };
    }
    return { answers, work: next, interrupted: ran.map((call) => ({ agent: work.agent, call })) };
  }
  const history = input.history();
  const answered = new Set(history.filter((i) => i.role === "tool").map((i) => i.tool_call_id));
  const last = history.findLast((i) => i.role === "assistant" && i.tool_calls?.length);
  if (!last?.tool_calls || !last.agent) return { answers: [], work: null, interrupted: [] };
  const agent = last.agent;
  const open = last.tool_calls.filter((c) => !answered.has(c.id));
  return {
    answers: open.map((call) => answer(agent, call)),
    work: null,
    interrupted: open.filter((call) => !handedOver(agent, call)).map((call) => ({ agent, call })),
  };
}

/**
 * The trace of the calls a restart cut off: one `tool_call` each, outcome `interrupted`, so the
 * trace says the call may have run and was not made again (not that it went well).
 */
export function interruptedTrace(
  run: Pick<Run, "id" | "session_id">,
  interrupted: readonly { agent: string; call: PendingCall }[],
  now: number,
): TraceEvent[] {
  return interrupted.map(({ agent, call }) =>
    traceEvent(
      run,
      "tool_call",
      agent,
      now,
      { tool_name: call.name, tool_args: traceArgs(call.arguments), outcome: "interrupted" },
      0,
      "interrupted by a restart; not made again",
    ),
  );
}
