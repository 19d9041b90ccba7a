import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { handoffTransitioned } from "../../src/audit/handoff-events";
import { API_ACTOR, type AuditRecord, SYSTEM_ACTOR } from "../../src/audit/record";
import {
  isLiveDelta,
  liveApproval,
  liveDelta,
  liveFromTrace,
  liveHandoffStatus,
  liveMessage,
  liveRetracted,
  liveRunChange,
  readLiveFrame,
  sseFrame,
} from "../../src/runtime/live-events";
import { moveRun, newRun, traceEvent } from "../../src/runtime/run-record";
import type { HistoryItem } from "../../src/schemas/handoff";
import { LIVE_EVENT_TYPES, LiveDelta, LiveEvent } from "../../src/schemas/live";
import { RUN_STATUSES, TraceEventType } from "../../src/schemas/run";

/**
 * Every builder's event is what the LiveEvent schema (and so /openapi.json) says its type
 * carries: parsed with the schema, it comes back unchanged. Together the cases below make
 * every type in the list, so a type with no builder, or a builder the schema refuses, fails.
 */

const T = Date.UTC(2026, 10, 1);
const run = newRun({ id: "run_1", session_id: "ses_1", agent: "desk", max_turns: 5, now: T });
const scope = { tenant: "alpha", session_id: "ses_1" };
const made = new Set<string>();

/** The event as the schema reads it: it must parse, and lose nothing. */
function fits(event: LiveEvent): void {
  made.add(event.type);
  expect(LiveEvent.parse(event)).toEqual(event);
}

describe("live event builders against the LiveEvent schema", () => {
  it("a trace event of each type becomes its live type, carrying the trace event", () => {
    for (const type of TraceEventType.options) {
      const trace = traceEvent(
        run,
        type,
        "desk",
        T,
        type === "tool_call" ? { tool_name: "lookup", tool_args: {} } : {},
      );
      const event = liveFromTrace(trace);
      fits(event);
      expect(event.data).toBe(trace);
    }
    // The router's decision before any run belongs to no run.
    const routed = liveFromTrace(traceEvent({ id: "ses_1", session_id: "ses_1" }, "route", "desk", T, {}));
    fits(routed);
    expect(routed.run_id).toBeNull();
  });

  it("each status change of a run is a run_* event carrying the run without its trace", () => {
    const withTrace = { ...run, events: [traceEvent(run, "agent_start", "desk", T, {})] };
    const started = liveRunChange(withTrace, null, T)!;
    fits(started);
    expect(started.type).toBe("run_started");
    expect(started.data).not.toHaveProperty("events");
    for (const to of RUN_STATUSES.filter((s) => s !== "running")) {
      const moved = moveRun(
        run,
        to,
        to === "failed" ? { error: { code: "MODEL_ERROR", message: "down" } } : {},
        scope,
        SYSTEM_ACTOR,
        T + 1,
      );
      if (!moved) continue;
      const event = liveRunChange(moved.run, "running", T + 1)!;
      fits(event);
      if (moved.run.status.startsWith("awaiting") || moved.run.status === "requires_action")
        expect(event.type).toBe("run_paused");
      else expect(event.type).toBe(`run_${moved.run.status}`);
    }
    const resumed = liveRunChange(run, "awaiting_human", T + 2)!;
    fits(resumed);
    expect(resumed.type).toBe("run_resumed");
    expect(liveRunChange(run, "running", T + 3)).toBeNull();
  });

  it("a message of each kind, an approval and a retraction carry their own data", () => {
    const items: HistoryItem[] = [
      { id: "msg_1", role: "user", content: "hello" },
      { id: "msg_2", role: "assistant", agent: "desk", content: "Hi", cut: true },
      {
        role: "assistant",
        agent: "desk",
        type: "tool_call",
        content: "",
        tool_calls: [{ id: "c1", name: "lookup", arguments: "{}" }],
      },
      { role: "tool", agent: "desk", type: "tool_output", tool_call_id: "c1", content: "ok" },
    ];
    for (const item of items) fits(liveMessage("ses_1", "run_1", item, T));
    for (const args of [{ amount: 900 }, "not json", null])
      fits(
        liveApproval("ses_1", "run_1", T, {
          inbox_id: "inb_1",
          tool_name: "refund",
          arguments: args,
          prompt: "Approve refund?",
          expires_at: null,
        }),
      );
    fits(liveRetracted("ses_1", "run_1", T, { message_id: "msg_2", agent: "desk", code: "GUARDRAIL_FAILED" }));
  });

  it("each step of a handoff is a handoff_status event, with its reason or error code when it has one", () => {
    const subject = {
      id: "hof_1_ses_1",
      source: "triage",
      target: "billing",
      mode: "transfer" as const,
      policy: "graceful" as const,
      created_at: new Date(T).toISOString(),
    };
    const records = [
      handoffTransitioned(
        scope,
        API_ACTOR,
        T,
        subject,
        { action: "handoff.initiated", from: null, to: "initiated" },
        {
          request_reason: "refund over the limit",
        },
      ),
      handoffTransitioned(
        scope,
        SYSTEM_ACTOR,
        T + 1,
        subject,
        {
          action: "handoff.failed",
          from: "initiated",
          to: "failed",
        },
        { error_code: "TARGET_UNAVAILABLE" },
      ),
    ];
    const events = liveHandoffStatus(records);
    for (const event of events) fits(event);
    expect(events.map((e) => e.data)).toEqual([
      {
        handoff_id: "hof_1_ses_1",
        action: "handoff.initiated",
        from: null,
        status: "initiated",
        source: "triage",
        target: "billing",
        mode: "transfer",
        policy: "graceful",
        reason: "refund over the limit",
      },
      {
        handoff_id: "hof_1_ses_1",
        action: "handoff.failed",
        from: "initiated",
        status: "failed",
        source: "triage",
        target: "billing",
        mode: "transfer",
        policy: "graceful",
        error_code: "TARGET_UNAVAILABLE",
      },
    ]);
  });

  it("a handoff record's details that are not what the schema says become null, never passed on", () => {
    const record = handoffTransitioned(
      scope,
      SYSTEM_ACTOR,
      T,
      { id: "hof_2_ses_1", source: "triage", target: null, mode: "transfer", policy: "immediate", created_at: "" },
      { action: "handoff.completed", from: "transferring", to: "completed" },
    );
    const garbled: AuditRecord = {
      ...record,
      details: { from: "nowhere", to: 7, source: { name: "triage" }, mode: "teleport", policy: null, reason: 1 },
    };
    const [event] = liveHandoffStatus([garbled]);
    fits(event!);
    expect(event!.data).toEqual({
      handoff_id: "hof_2_ses_1",
      action: "handoff.completed",
      from: null,
      status: null,
      source: null,
      target: null,
      mode: null,
      policy: null,
    });
    // Records of other kinds, or of no session, are no handoff steps.
    expect(
      liveHandoffStatus([
        { ...record, action: "session.created" },
        { ...record, session_id: null },
      ]),
    ).toEqual([]);
  });

  it("a piece of an answer parses as a LiveDelta", () => {
    const delta = liveDelta("ses_1", "run_1", T, { message_id: "msg_2", agent: "desk", index: 0, delta: "Hi" });
    expect(LiveDelta.parse(delta)).toEqual(delta);
  });

  it("every live event type is made by some builder above", () => {
    expect([...made].sort()).toEqual([...LIVE_EVENT_TYPES].sort());
  });
});

describe("the LiveEvent schema", () => {
  const envelope = { id: "evt_1", session_id: "ses_1", run_id: "run_1", at: new Date(T).toISOString() };

  it("refuses data that is not its type's, and a type it does not list", () => {
    const trace = traceEvent(run, "agent_start", "desk", T, {});
    expect(LiveEvent.safeParse({ ...envelope, type: "agent_started", data: trace }).success).toBe(true);
    expect(LiveEvent.safeParse({ ...envelope, type: "message", data: trace }).success).toBe(false);
    expect(LiveEvent.safeParse({ ...envelope, type: "run_failed", data: { status: "failed" } }).success).toBe(false);
    expect(
      LiveEvent.safeParse({ ...envelope, type: "message.retracted", data: { message_id: "m", agent: "a" } }).success,
    ).toBe(false);
    expect(LiveEvent.safeParse({ ...envelope, type: "message.delta", data: {} }).success).toBe(false);
  });
});

describe("reading a run's stream", () => {
  /** The frame as a reader of the stream gets it: sseFrame's text, split back into its fields. */
  const frameOf = (event: { id?: string; type: string; data: unknown }) => {
    const text = sseFrame(event);
    return { event: /^event: (.*)$/m.exec(text)![1]!, data: /^data: (.*)$/m.exec(text)![1]! };
  };
  const delta = liveDelta("ses_1", "run_1", T, { message_id: "msg_2", agent: "desk", index: 3, delta: "Hi" });
  const message = liveMessage("ses_1", "run_1", { id: "msg_1", role: "user", content: "hello" }, T);
  const completed = liveRunChange(
    moveRun(run, "completed", { output: "Done" }, scope, SYSTEM_ACTOR, T)!.run,
    "running",
    T,
  )!;

  it("gives back what the builders sent: events parsed by the schema, deltas as they are", () => {
    for (const event of [message, completed, liveFromTrace(traceEvent(run, "llm_call", "desk", T, {}))])
      expect(readLiveFrame(frameOf({ id: event.id, type: event.type, data: event }))).toEqual(event);
    expect(readLiveFrame(frameOf({ type: delta.type, data: delta }))).toEqual(delta);
  });

  it("skips (null) a type it does not know, data not of its type, a broken delta and text that is not JSON", () => {
    const skipped = [
      frameOf({ id: "evt_9", type: "run_teleported", data: { ...completed, type: "run_teleported" } }),
      frameOf({ id: message.id, type: "message", data: { ...message, data: null } }),
      frameOf({ id: completed.id, type: "run_completed", data: { ...completed, data: { status: "completed" } } }),
      frameOf({ type: "message.delta", data: { ...delta, data: { ...delta.data, delta: 7 } } }),
      frameOf({ type: "message.delta", data: "a piece" }),
      // A delta is read as one only from a frame that says so; a stored event is never a delta.
      frameOf({ type: "message", data: delta }),
      { event: "message", data: '{"type":"message",' },
      { event: "message.delta", data: "" },
    ];
    for (const frame of skipped) expect(readLiveFrame(frame), frame.data).toBeNull();
  });

  it("the delta guard answers as the LiveDelta schema does, on deltas with any field changed or gone", () => {
    const anything = fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.string(),
      fc.double(),
      fc.integer({ min: -3, max: 3 }),
      fc.constant(Number.MAX_SAFE_INTEGER + 2),
      fc.boolean(),
      fc.array(fc.string(), { maxLength: 2 }),
      fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }),
    );
    const top = fc.constantFrom("type", "session_id", "run_id", "at", "data");
    const inner = fc.constantFrom("message_id", "agent", "index", "delta");
    const changed = fc.tuple(fc.option(top), fc.option(inner), anything).map(([outer, field, value]) => {
      const data: Record<string, unknown> = { ...delta.data };
      const out: Record<string, unknown> = { ...delta, data };
      if (field !== null) data[field] = value;
      if (outer !== null) out[outer] = value;
      return JSON.parse(JSON.stringify(out)) as unknown;
    });
    fc.assert(
      fc.property(changed, (value) => {
        expect(isLiveDelta(value)).toBe(LiveDelta.safeParse(value).success);
      }),
      { numRuns: 2000 },
    );
  });
});
