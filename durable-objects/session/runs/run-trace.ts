import { callContext, turnSpanId } from "../../../src/telemetry/propagation";
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
