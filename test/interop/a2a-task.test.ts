import { TaskState } from "@a2a-js/sdk";
import { describe, expect, it } from "vitest";
import { agentCard, publicCard } from "../../src/interop/a2a-card";
import { RunStreamMapper, runTask, TASK_STATE_OF } from "../../src/interop/a2a-task";
import { AgentDefinition } from "../../src/schemas/agent";
import type { LiveEvent } from "../../src/schemas/live";
import type { Run } from "../../src/schemas/run";

/** Runs as A2A tasks, pure (docs/a2a.md): states, the task view, the stream of a run's live events, cards. */

const run = (over: Partial<Run> = {}): Run => ({
  id: "run_1",
  session_id: "ses_1",
  trace_id: "4bf92f3577b34da6a3ce929d0e0e4736",
  status: "running",
  agent: "billing",
  turns: 1,
  max_turns: 10,
  output: null,
  output_agent: null,
  pending: null,
  warnings: [],
  handoffs: [],
  started_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:01.000Z",
  ended_at: null,
  events: [],
  ...over,
});

describe("task states", () => {
  it("running is WORKING, every pause INPUT_REQUIRED, the ends their own", () => {
    expect(TASK_STATE_OF).toEqual({
      running: TaskState.TASK_STATE_WORKING,
      awaiting_human: TaskState.TASK_STATE_INPUT_REQUIRED,
      awaiting_approval: TaskState.TASK_STATE_INPUT_REQUIRED,
      requires_action: TaskState.TASK_STATE_INPUT_REQUIRED,
      completed: TaskState.TASK_STATE_COMPLETED,
      failed: TaskState.TASK_STATE_FAILED,
      cancelled: TaskState.TASK_STATE_CANCELED,
    });
  });
});

describe("runTask", () => {
  it("a completed run: its answer as the artifact (the answer's message id), user and agent messages as history", () => {
    const task = runTask(run({ status: "completed", output: "Paid.", output_agent: "billing" }), [
      { id: "msg_u", role: "user", content: "paid?", created_at: "2026-01-01T00:00:00.100Z" },
      { id: "msg_t", role: "assistant", content: "", type: "tool_call", created_at: "2026-01-01T00:00:00.200Z" },
      { id: "msg_a", role: "assistant", agent: "billing", content: "Paid.", created_at: "2026-01-01T00:00:00.300Z" },
    ]);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.artifacts.map((a) => a.artifactId)).toEqual(["msg_a"]);
    expect(task.history.map((m) => m.messageId)).toEqual(["msg_u", "msg_a"]);
    expect(runTask(run(), [], 0).history).toEqual([]);
  });

  it("a run waiting on a remote agent's input says the remote agent's question in its status message", () => {
    const pending = {
      kind: "input" as const,
      agent: "orderdesk",
      task_id: "t1",
      context_id: "c1",
      expires_at: "2026-01-02T00:00:00.000Z",
    };
    const text = (task: ReturnType<typeof runTask>) => task.status?.message?.parts[0]?.content;
    const asked = run({ status: "awaiting_human", pending: { ...pending, question: "Which order number?" } });
    expect(text(runTask(asked, [], 0))).toEqual({ $case: "text", value: "Which order number?" });
    expect(runTask(asked, []).status?.message?.metadata).toEqual({ relay: { agent: "orderdesk" } });
    // A run paused before the question was kept with it: the agent's last message, when the items were read.
    const older = run({ status: "awaiting_human", pending });
    const items = [
      { id: "msg_u", role: "user" as const, content: "where is it?", created_at: "2026-01-01T00:00:00.100Z" },
      {
        id: "msg_q",
        role: "assistant" as const,
        content: "Your order number?",
        created_at: "2026-01-01T00:00:00.200Z",
      },
    ];
    expect(text(runTask(older, items))).toEqual({ $case: "text", value: "Your order number?" });
    expect(text(runTask(older, []))).toEqual({
      $case: "text",
      value: "'orderdesk' needs your answer: send it as the next message of this task.",
    });
  });

  it("a failed run says its error in the status message", () => {
    const task = runTask(run({ status: "failed", error: { code: "MODEL_TIMEOUT", message: "slow" } }), []);
    expect(task.status?.message?.parts[0]?.content).toEqual({ $case: "text", value: "MODEL_TIMEOUT: slow" });
  });
});

describe("RunStreamMapper", () => {
  // Events of any type with data as each case needs it (the mapper reads only what it uses).
  const event = (type: LiveEvent["type"], data: unknown, id = "evt_1"): LiveEvent =>
    ({
      id,
      type,
      session_id: "ses_1",
      run_id: "run_1",
      at: "2026-01-01T00:00:01.000Z",
      data,
    }) as LiveEvent;
  it("the task first, pieces appended, the whole answer under the message's id, then COMPLETED; nothing after", () => {
    const mapper = new RunStreamMapper("run_1", "ses_1");
    const out = [
      ...mapper.event(event("run_started", run())),
      ...mapper.delta({
        type: "message.delta",
        session_id: "ses_1",
        run_id: "run_1",
        at: "",
        data: { message_id: "msg_a", agent: "billing", index: 0, delta: "Pa" },
      }),
      ...mapper.delta({
        type: "message.delta",
        session_id: "ses_1",
        run_id: "run_1",
        at: "",
        data: { message_id: "msg_a", agent: "billing", index: 1, delta: "id." },
      }),
      ...mapper.event(event("message", { id: "msg_a", role: "assistant", agent: "billing", content: "Paid." })),
      ...mapper.event(event("run_completed", run({ status: "completed", output: "Paid.", output_agent: "billing" }))),
    ];
    expect(out.map((r) => r.payload?.$case)).toEqual([
      "task",
      "artifactUpdate",
      "artifactUpdate",
      "artifactUpdate",
      "statusUpdate",
    ]);
    const updates = out.flatMap((r) => (r.payload?.$case === "artifactUpdate" ? [r.payload.value] : []));
    expect(updates.map((u) => [u.artifact?.artifactId, u.append, u.lastChunk])).toEqual([
      ["msg_a", false, false],
      ["msg_a", true, false],
      ["msg_a", false, true],
    ]);
    expect(mapper.done).toBe(true);
    expect(mapper.event(event("run_started", run()))).toEqual([]);
  });
});

describe("cards", () => {
  it("an agent's card: its interface, bearer scheme, skills from description, triggers and capabilities", () => {
    const agent = AgentDefinition.parse({
      name: "billing",
      title: "Billing",
      description: "Money",
      triggers: { keywords: ["refund"], examples: ["I want a refund"] },
      capabilities: [{ name: "refunds", tags: ["money"] }],
    });
    const card = agentCard(agent, "https://relay.test/a2a/billing", 7);
    expect(card).toMatchObject({
      name: "Billing",
      version: "7",
      capabilities: { streaming: true, pushNotifications: false },
    });
    expect(card.skills.map((s) => [s.id, s.tags, s.examples])).toEqual([
      ["billing", ["refund", "refunds"], ["I want a refund"]],
      ["billing.refunds", ["money"], []],
    ]);
    // Every skill has tags (REQUIRED in A2A 1.0): one with nothing to tag carries its own id.
    const bare = agentCard(AgentDefinition.parse({ name: "plain" }), "https://relay.test/a2a/plain", 1);
    expect(bare.skills.map((s) => s.tags)).toEqual([["plain"]]);
    expect(card.provider).toEqual({ organization: "Relay", url: "https://relay.test" });
    // Without the key: one generic skill (the spec requires one), the same for every address.
    const anonymous = publicCard("https://relay.test/a2a/x");
    expect(anonymous.skills.map((s) => [s.id, s.tags])).toEqual([["relay", ["relay"]]]);
    expect(anonymous.skills).toEqual(publicCard("https://relay.test/a2a/y").skills);
  });
});
