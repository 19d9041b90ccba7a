import type { TraceEvent } from "../schemas/run";

/**
 * The event that opened the agent turn still open after a run's events, following the turn
 * rules of spansFromRun (src/telemetry/from-trace.ts) without building a span: every outbound
 * call of a run asks which turn it belongs to, and building the whole run's spans for that
 * was a few per cent of a session's CPU with export off (docs/benchmarks.md). A property test
 * holds the two to the same answer (test/telemetry/open-turn.test.ts).
 *
 * A turn opens at its `agent_start`, or at the first event of an agent with no open turn (a
 * run's record that starts mid-turn); another agent's event closes it and opens that agent's;
 * it closes at `agent_complete`, `agent_error` or an accepted handoff. A person's turn
 * announced by a second `agent_start` of the same agent stays one turn.
 */
export function openTurnEvent(events: readonly TraceEvent[], runId: string): TraceEvent | null {
  let turn: TraceEvent | null = null;
  for (const event of events) {
    if (event.correlation_id !== runId || event.event_type === "route" || event.event_type === "compaction") continue;
    const same = turn !== null && turn.agent_name === event.agent_name;
    if (event.event_type === "agent_start") {
      if (!(same && event.details.executor === "human")) turn = event;
      continue;
    }
    if (!same) turn = event;
    if (
      event.event_type === "agent_complete" ||
      event.event_type === "agent_error" ||
      (event.event_type === "handoff" && !event.error)
    )
      turn = null;
  }
  return turn;
}
