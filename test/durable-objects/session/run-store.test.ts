import { describe, expect, it } from "vitest";
import { RunStore } from "../../../durable-objects/session/runs/run-store";
import { SESSION_MIGRATIONS, SESSION_SCHEMA } from "../../../durable-objects/session/session-store";
import { migrate } from "../../../durable-objects/shared/sql";
import { newRun, newRunId } from "../../../src/runtime/run-record";
import { derivedTraceId } from "../../../src/telemetry/span-ids";
import { meteredSql, onScratchObject } from "../schema-shape";

/** The run row as each step stores it: rows written are what an object's storage is billed by. */

const NOW = Date.UTC(2026, 5, 1);
const SESSION = `ses_${"a".repeat(52)}`;
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

describe("the run store", () => {
  it("writes a step that keeps the run's status as one row, not two (its active-index entry left alone)", async () => {
    const seen = await onScratchObject("run-store-tests", (plain, storage) => {
      migrate(storage, plain, SESSION_MIGRATIONS, SESSION_SCHEMA);
      const { sql, written } = meteredSql(storage);
      const store = new RunStore(sql);
      const run = newRun({ id: newRunId(SESSION, NOW), session_id: SESSION, agent: "support", max_turns: 5, now: NOW });
      store.save({ run, step: "turn", resumes: 0, work: null });
      const started = written();
      store.save({ run: { ...run, turns: 1 }, step: "tools", resumes: 0, work: null });
      const step = written();
      const stepped = store.get(run.id);
      store.save({ run: { ...run, turns: 1, status: "completed" }, step: null, resumes: 0, work: null });
      const ended = written();
      return { started, step, stepped, ended, active: store.active(), done: store.count("completed") };
    });
    expect(seen).toMatchObject({ started: 2, step: 1, ended: 1, active: null, done: 1 });
    expect(seen.stepped).toMatchObject({ step: "tools", run: { turns: 1, status: "running" } });
  });

  it("keeps a run's trace with it; a format-1 run, stored before runs kept one, reads as its derived trace", async () => {
    const seen = await onScratchObject("run-store-trace", (plain, storage) => {
      migrate(storage, plain, SESSION_MIGRATIONS, SESSION_SCHEMA);
      const store = new RunStore(plain);
      const traced = newRun({
        id: newRunId(SESSION, NOW),
        session_id: SESSION,
        agent: "support",
        max_turns: 5,
        now: NOW,
        trace_id: TRACE,
      });
      const parent = { span_id: "00f067aa0ba902b7", sampled: false, tracestate: [{ key: "vendor", value: "abc" }] };
      store.save({ run: traced, step: "turn", resumes: 0, work: null, trace_parent: parent });
      // A later step that spreads the row keeps the caller's context.
      const kept = store.get(traced.id)!;
      store.save({ ...kept, run: { ...kept.run, turns: 1 } });
      // A run as format 1 wrote it: the API's run without trace_id.
      const oldId = newRunId(SESSION, NOW + 1);
      const {
        trace_id: _t,
        events: _e,
        ...old
      } = newRun({
        id: oldId,
        session_id: SESSION,
        agent: "support",
        max_turns: 5,
        now: NOW + 1,
      });
      storage.sql.exec(
        "INSERT INTO runs (id, status, step, resumes, record, format) VALUES (?, 'running', 'turn', 0, ?, 1)",
        oldId,
        JSON.stringify({ ...old, events: [] }),
      );
      const read = store.get(oldId)!;
      // Written back, it is format 2 with the same derived trace.
      store.save({ ...read, run: { ...read.run, turns: 1 } });
      const format = storage.sql.exec<{ format: number }>("SELECT format FROM runs WHERE id = ?", oldId).one().format;
      return { traced: store.get(traced.id), old: read, again: store.get(oldId), format, parent };
    });
    expect(seen.traced).toMatchObject({ run: { trace_id: TRACE, turns: 1 }, trace_parent: seen.parent });
    expect(seen.old.run.trace_id).toBe(derivedTraceId("relay.run", seen.old.run.id));
    expect(seen.old.trace_parent).toBeNull();
    expect(seen.again).toMatchObject({ run: { trace_id: seen.old.run.trace_id }, trace_parent: null });
    expect(seen.format).toBe(2);
  });
});
