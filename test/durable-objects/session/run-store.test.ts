import { describe, expect, it } from "vitest";
import { RunStore } from "../../../durable-objects/session/runs/run-store";
import { SESSION_MIGRATIONS, SESSION_SCHEMA } from "../../../durable-objects/session/session-store";
import { migrate } from "../../../durable-objects/shared/sql";
import { newRun, newRunId } from "../../../src/runtime/run-record";
import { meteredSql, onScratchObject } from "../schema-shape";

/** The run row as each step stores it: rows written are what an object's storage is billed by. */

const NOW = Date.UTC(2026, 5, 1);
const SESSION = `ses_${"a".repeat(52)}`;

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
});
