import { describe, expect, it } from "vitest";
import {
  maxTurnsOf,
  mayContinue,
  moveRun,
  newRun,
  newRunId,
  RUN_TRANSITIONS,
  sessionOfRun,
  traceArgs,
} from "../../src/runtime/run-record";
import { DEFAULT_MAX_TURNS, RUN_STATUSES } from "../../src/schemas/run";

const scope = { tenant: "t", session_id: "ses_x" };
const actor = { actor: "relay", actor_type: "system" as const };
const run = newRun({ id: "run_1", session_id: "ses_x", agent: "desk", max_turns: 5, now: 0 });

describe("run transitions", () => {
  it.each(RUN_STATUSES.flatMap((from) => RUN_STATUSES.map((to) => [from, to] as const)))("%s → %s", (from, to) => {
    const moved = moveRun({ ...run, status: from }, to, {}, scope, actor, 1000);
    expect(moved !== null).toBe(RUN_TRANSITIONS[from].includes(to));
  });

  it("each transition carries its audit record; an ending sets ended_at and keeps the error", () => {
    const failed = moveRun(run, "failed", { error: { code: "MODEL_ERROR", message: "down" } }, scope, actor, 5000)!;
    expect(failed.run).toMatchObject({
      status: "failed",
      error: { code: "MODEL_ERROR" },
      ended_at: "1970-01-01T00:00:05.000Z",
    });
    expect(failed.record).toMatchObject({
      action: "run.failed",
      details: { run_id: "run_1", from: "running", to: "failed", error_code: "MODEL_ERROR" },
    });
    const paused = moveRun(run, "awaiting_human", {}, scope, actor, 5000)!;
    expect(paused.record.action).toBe("run.paused");
    expect(moveRun(paused.run, "running", {}, scope, actor, 6000)!.record.action).toBe("run.resumed");
  });

  it("run ids carry their session", () => {
    const session = `ses_${"a".repeat(52)}`;
    expect(sessionOfRun(newRunId(session, 0))).toBe(session);
    expect(sessionOfRun("run_nope")).toBeNull();
  });
});

describe("what a run's trace and limits read from their inputs", () => {
  it("shows tool arguments parsed when they are JSON, else as text cut at 1,000 characters", () => {
    expect(traceArgs('{"id":"a","n":2}')).toEqual({ id: "a", n: 2 });
    expect(traceArgs("not json")).toBe("not json");
    expect(traceArgs("x".repeat(1500))).toBe("x".repeat(1000));
  });

  it("takes max_turns from the session's metadata when it is a whole number from 1 to 100, else the default", () => {
    expect(maxTurnsOf({ max_turns: 3 })).toBe(3);
    expect(maxTurnsOf({ max_turns: 100 })).toBe(100);
    for (const bad of [0, 101, 2.5, "3", null]) expect(maxTurnsOf({ max_turns: bad })).toBe(DEFAULT_MAX_TURNS);
    expect(maxTurnsOf({})).toBe(DEFAULT_MAX_TURNS);
  });
});

describe("mayContinue: the run guard after an outside call", () => {
  it("holds only while the session is active and the run running", () => {
    expect(mayContinue({ status: "active" }, { status: "running" })).toBe(true);
    expect(mayContinue({ status: "expired" }, { status: "running" })).toBe(false);
    expect(mayContinue({ status: "active" }, { status: "failed" })).toBe(false);
    expect(mayContinue({ status: "active" }, { status: "awaiting_human" })).toBe(false);
    expect(mayContinue(null, { status: "running" })).toBe(false);
    expect(mayContinue({ status: "active" }, undefined)).toBe(false);
  });
});
