import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type TraceEvent, TraceEventType } from "../../src/schemas/run";
import { spansFromRun } from "../../src/telemetry/from-trace";
import { openTurnEvent } from "../../src/telemetry/open-turn";
import { runTrace, turnSpanId } from "../../src/telemetry/propagation";
import { derivedSpanId } from "../../src/telemetry/span-ids";

/**
 * The open turn an outbound call names is found without building the run's spans; these
 * hold it to the turn spansFromRun lists as open, over any sequence of a run's events.
 */

const SESSION = `ses_${"b".repeat(52)}`;
const RUN_ID = `run_${"1".repeat(26)}_${SESSION}`;
const OTHER_RUN = `run_${"2".repeat(26)}_${SESSION}`;
const T0 = Date.parse("2026-11-29T10:00:00.000Z");

const eventArb = fc.record({
  type: fc.constantFrom(...TraceEventType.options),
  agent: fc.constantFrom("triage", "billing", "sales"),
  run: fc.constantFrom(RUN_ID, RUN_ID, RUN_ID, OTHER_RUN, SESSION),
  executor: fc.constantFrom(undefined, "model", "human", "webhook"),
  error: fc.constantFrom(null, null, "timeout"),
  tool: fc.constantFrom(undefined, "transfer_to_billing", "lookup"),
});

type Spec = typeof eventArb extends fc.Arbitrary<infer T> ? T : never;

function events(specs: Spec[]): TraceEvent[] {
  return specs.map((s, i) => ({
    event_id: `evt_${(1000 + i).toString().padStart(26, "0")}`,
    event_type: s.type,
    timestamp: new Date(T0 + i * 10).toISOString(),
    session_id: SESSION,
    agent_name: s.agent,
    correlation_id: s.run,
    details: {
      ...(s.executor ? { executor: s.executor as "model" | "human" | "webhook" } : {}),
      ...(s.tool ? { tool_name: s.tool } : {}),
    },
    duration_ms: 5,
    error: s.error,
  }));
}

/** The run's spans as the export makes them, under the caller's span when there is one. */
const runSpans = (list: TraceEvent[], parent?: { trace_id: string; span_id: string }) =>
  spansFromRun({
    run_id: RUN_ID,
    session_id: SESSION,
    events: list,
    settings: { capture_content: false },
    provider: "openai",
    ...(parent ? { parent } : {}),
  });

describe("the open turn", () => {
  it("is the turn spansFromRun lists as open, for any run's events", () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 30 }), (specs) => {
        const list = events(specs);
        const spans = runSpans(list);
        const trace = runTrace(RUN_ID, null);
        const expected = spans.open[0] ?? null;
        const named = turnSpanId({ id: RUN_ID, session_id: SESSION }, trace, list);
        expect(named).toBe(expected ?? derivedSpanId(trace.trace_id, RUN_ID, "run"));
        expect(openTurnEvent(list, RUN_ID) === null).toBe(expected === null);
      }),
      { numRuns: 2000 },
    );
  });

  it("follows a caller's trace: the span named is the one spansFromRun makes under that parent", () => {
    const list = events([
      { type: "agent_start", agent: "triage", run: RUN_ID, executor: "model", error: null, tool: undefined },
      { type: "llm_call", agent: "triage", run: RUN_ID, executor: "model", error: null, tool: undefined },
    ]);
    const caller = { trace_id: "4bf92f3577b34da6a3ce929d0e0e4736", span_id: "00f067aa0ba902b7", sampled: true };
    const trace = runTrace(RUN_ID, { ...caller, tracestate: [] });
    const spans = runSpans(list, { trace_id: caller.trace_id, span_id: caller.span_id });
    expect(spans.open).toHaveLength(1);
    expect(turnSpanId({ id: RUN_ID, session_id: SESSION }, trace, list)).toBe(spans.open[0]);
  });
});
