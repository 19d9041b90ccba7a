import { describe, expect, it } from "vitest";
import { err, ok } from "../../src/errors";
import { fanOutCallOutput, fanOutCallTasks } from "../../src/runtime/fan-out-tool";
import { Fanout } from "../../src/schemas/collaboration";

describe("a supervisor's fan_out call", () => {
  it("numbers the tasks in order and joins their instructions as the query", () => {
    const tasks = fanOutCallTasks(
      JSON.stringify({
        tasks: [
          { agent: "weather", instruction: "Rain in Lisbon?" },
          { agent: "travel", instruction: "Train from Porto?" },
        ],
      }),
    );
    expect(tasks).toMatchObject({
      original_query: "Rain in Lisbon?\nTrain from Porto?",
      tasks: [
        { task_id: "task_1", agent: "weather", instruction: "Rain in Lisbon?" },
        { task_id: "task_2", agent: "travel", instruction: "Train from Porto?" },
      ],
    });
  });

  it("is no decomposition when the arguments are not JSON, name no task, or name a bad agent", () => {
    expect(fanOutCallTasks("{not json")).toBeNull();
    expect(fanOutCallTasks("")).toBeNull();
    expect(fanOutCallTasks(JSON.stringify({ tasks: [] }))).toBeNull();
    expect(fanOutCallTasks(JSON.stringify({ tasks: [{ agent: "Not A Name!", instruction: "x" }] }))).toBeNull();
  });

  const fanout = (over: Partial<Fanout>): Fanout =>
    Fanout.parse({
      id: "fan_1",
      session_id: "ses_1",
      supervisor: "planner",
      state: "COMPLETED",
      decomposed_by: "model",
      decomposition: {
        original_query: "q",
        tasks: [
          { task_id: "task_1", agent: "weather", instruction: "Rain?" },
          { task_id: "task_2", agent: "travel", instruction: "Train?" },
        ],
      },
      results: [],
      response: null,
      states: [],
      run_id: null,
      started_at: "2026-11-25T00:00:00.000Z",
      ended_at: null,
      ...over,
    });

  it("outputs the aggregate of a completed fan-out", () => {
    expect(fanOutCallOutput(ok(fanout({ state: "COMPLETED", response: "weather: rain\ntravel: 9:05" })))).toEqual({
      ok: true,
      output: "weather: rain\ntravel: 9:05",
    });
  });

  it("outputs what failed and what came back of a failed one, and the refusal of a refused one", () => {
    const failed = fanout({
      state: "FAILED",
      results: [
        { task_id: "task_1", agent: "weather", success: true, data: "rain", execution_time: 1 },
        { task_id: "task_2", agent: "travel", success: false, error: "TASK_TIMEOUT", execution_time: 60 },
      ],
    });
    expect(fanOutCallOutput(ok(failed))).toEqual({
      ok: false,
      output: `Error: the fan-out failed (travel: TASK_TIMEOUT). What came back: [{"agent":"weather","data":"rain"}]`,
    });
    expect(fanOutCallOutput(err("RUN_IN_PROGRESS", "Run run_1 is running; fan out when it has ended."))).toEqual({
      ok: false,
      output: "Error: the fan-out was refused (RUN_IN_PROGRESS): Run run_1 is running; fan out when it has ended.",
    });
  });
});
