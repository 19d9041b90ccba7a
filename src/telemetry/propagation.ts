import type { RunTrace, TraceEvent } from "../schemas/run";
import { openTurnEvent } from "./open-turn";
import { derivedSpanId, derivedTraceId } from "./span-ids";
import { formatTraceparent, formatTracestate, parseTraceContext, type TraceContext } from "./trace-context";

/**
 * Trace context in and out of a run (docs/observability.md, Propagation). A run belongs to
 * the trace of the request that started it, or to a trace of its own whose id is derived
 * from its run id (the id spansFromRun gives it too). Every outbound call made for the run
 * carries that trace, with the span id of the span the call belongs to as spansFromRun names
 * it, so what a tenant's endpoint records nests under Relay's spans.
 */

/**
 * A request's trace context as the option that carries it to the run it starts: empty when
 * it has no valid `traceparent` (an invalid one is ignored: the run starts its own trace).
 */
export function incomingTrace(headers: { get(name: string): string | null }): { trace?: TraceContext } {
  const trace = parseTraceContext(headers);
  return trace ? { trace } : {};
}

/**
 * A JSON-RPC request's trace context from its `params._meta`, as MCP carries it (SEP-414: the
 * unprefixed keys `traceparent` and `tracestate`, in the W3C formats): null when it holds no
 * valid `traceparent`. A value that is not a string counts as absent; `tracestate` is read
 * only beside the `traceparent` of the same `_meta`.
 */
export function metaTrace(meta: Readonly<Record<string, unknown>> | undefined): TraceContext | null {
  if (meta === undefined) return null;
  return parseTraceContext({
    get: (name) => {
      const value = meta[name];
      return typeof value === "string" ? value : null;
    },
  });
}

/** A resuming request's context as a trace event's `resumed_by` (nothing when it carried none). */
export function resumedByOf(context: TraceContext | undefined): { resumed_by?: { trace_id: string; span_id: string } } {
  return context ? { resumed_by: { trace_id: context.trace_id, span_id: context.span_id } } : {};
}

/** The trace a run keeps, from the context its starting request carried (null: none, or an invalid one). */
export function runTrace(runId: string, incoming: TraceContext | null): RunTrace {
  if (!incoming) return { trace_id: derivedTraceId("relay.run", runId), parent: null };
  return {
    trace_id: incoming.trace_id,
    parent: { span_id: incoming.span_id, sampled: incoming.sampled, tracestate: incoming.tracestate },
  };
}

/** The trace of a run stored before runs kept one: derived from its run id, as spansFromRun derives it. */
export const derivedRunTrace = (runId: string): RunTrace => runTrace(runId, null);

/** The context an outbound call sends: the run's trace, `span_id` the span it belongs to. */
export function callContext(trace: RunTrace, span_id: string): TraceContext {
  return {
    trace_id: trace.trace_id,
    span_id,
    // A trace Relay starts is recorded; a caller's keeps the caller's decision.
    sampled: trace.parent?.sampled ?? true,
    tracestate: trace.parent?.tracestate ?? [],
  };
}

/** The `traceparent` (and `tracestate`, when there is one) of a call. */
export function traceHeaders(context: TraceContext): Record<string, string> {
  const state = formatTracestate(context.tracestate);
  const traceparent = formatTraceparent(context);
  return state === null ? { traceparent } : { traceparent, tracestate: state };
}

/**
 * The span id of the run's agent turn that is open after `events` (the run's own, in order):
 * the `invoke_agent` span spansFromRun lists as open. A run with no open turn (none begun
 * yet, or a call made after the last one closed) names a span derived from its run id.
 */
export function turnSpanId(
  run: { id: string; session_id: string },
  trace: RunTrace,
  events: readonly TraceEvent[],
): string {
  return openTurnSpanId(run, trace, events) ?? derivedSpanId(trace.trace_id, run.id, "run");
}

/** The `invoke_agent` span spansFromRun lists as open after `events`; null when no turn is. */
function openTurnSpanId(
  run: { id: string; session_id: string },
  trace: RunTrace,
  events: readonly TraceEvent[],
): string | null {
  const opener = openTurnEvent(events, run.id);
  if (!opener) return null;
  // The trace id spansFromRun gives the run: its caller's, or the one derived from its id.
  const traceId = trace.parent ? trace.trace_id : derivedTraceId("relay.run", run.id);
  return derivedSpanId(traceId, opener.event_id, "turn");
}

/**
 * The span id a delivery of the run's audit record `recordId` sends (docs/observability.md,
 * Propagation): the agent's turn that was open when the record was written — read from the
 * run's events made before it, since trace event ids (`evt_` and a ULID) and record ids are
 * ULIDs of one clock, in the order they were made — else, for a record written outside a
 * turn (the run's start, its end), the caller's span, and without a caller the span
 * {@link turnSpanId} names outside a turn.
 */
export function recordSpanId(
  run: { id: string; session_id: string },
  trace: RunTrace,
  events: readonly TraceEvent[],
  recordId: string,
): string {
  const before = events.filter((e) => e.event_id.replace(/^evt_/, "").toUpperCase() < recordId);
  return openTurnSpanId(run, trace, before) ?? trace.parent?.span_id ?? derivedSpanId(trace.trace_id, run.id, "run");
}

/** The span id of the `execute_tool` span of the tool_call event `eventId` (see from-trace.ts). */
export const toolSpanId = (trace: RunTrace, eventId: string): string => derivedSpanId(trace.trace_id, eventId, "tool");
