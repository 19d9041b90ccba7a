import { callContext, recordSpanId, turnSpanId } from "../../../src/telemetry/propagation";
import type { TraceContext } from "../../../src/telemetry/trace-context";
import { type RunRow, type RunStore, traceOf } from "./run-store";

/**
 * The trace context a run's outbound call sends (docs/observability.md, Propagation): the
 * run's trace, and the span of the agent's turn that is open now, as spansFromRun names it
 * from the run's stored trace events. Read from storage each time, so a run resumed after a
 * pause or a restart sends what it sent before.
 */
export function turnContext(store: Pick<RunStore, "events">, row: RunRow): TraceContext {
  const trace = traceOf(row);
  return callContext(trace, turnSpanId(row.run, trace, store.events(row.run.id)));
}

/**
 * The trace context of a delivery of one of a run's audit records, by run id and record id
 * (see recordSpanId); null when the session holds no such run. Each run's row and events are
 * read once per reader, so a batch of one run's records reads them once.
 */
export function recordContexts(
  store: Pick<RunStore, "get" | "events">,
): (runId: string, recordId: string) => TraceContext | null {
  const read = new Map<string, { row: RunRow; events: ReturnType<RunStore["events"]> } | null>();
  return (runId, recordId) => {
    let run = read.get(runId);
    if (run === undefined) {
      const row = store.get(runId);
      run = row ? { row, events: store.events(runId) } : null;
      read.set(runId, run);
    }
    if (run === null) return null;
    const trace = traceOf(run.row);
    return callContext(trace, recordSpanId(run.row.run, trace, run.events, recordId));
  };
}
