import { describe, expect, it } from "vitest";
import { redactTurn } from "../../src/runtime/agent-turn";

/** What a remote wrote back passes through the redactor before it reaches a message, an error or a trace. */
const redact = (text: string) => text.replaceAll("s3cret", "[redacted]");

describe("redactTurn", () => {
  it("redacts the remote task's id an answer's trace records, beside its text and calls' arguments", () => {
    const redacted = redactTurn(
      {
        ok: true,
        response: { content: "echo s3cret", tool_calls: [{ id: "c1", name: "t", arguments: '{"k":"s3cret"}' }] },
        model: "Remote",
        duration_ms: 1,
        facts: { a2a: { method: "SendMessage", task_id: "task-s3cret", task_state: "TASK_STATE_COMPLETED" } },
      },
      redact,
    );
    expect(JSON.stringify(redacted)).not.toContain("s3cret");
    expect(redacted.facts?.a2a).toEqual({
      method: "SendMessage",
      task_id: "task-[redacted]",
      task_state: "TASK_STATE_COMPLETED",
    });
  });

  it("a failure's message and task id likewise; facts without a task are kept as they are", () => {
    const failed = redactTurn(
      {
        ok: false,
        code: "REMOTE_AGENT_ERROR",
        message: "bad s3cret",
        duration_ms: 1,
        facts: { a2a: { method: "SendStreamingMessage", task_id: "s3cret" } },
      },
      redact,
    );
    expect(failed).toMatchObject({ message: "bad [redacted]", facts: { a2a: { task_id: "[redacted]" } } });
    const plain = { ok: false as const, code: "REMOTE_AGENT_ERROR" as const, message: "x", duration_ms: 1 };
    expect(redactTurn({ ...plain, facts: { a2a: { method: "SendMessage" as const } } }, redact).facts).toEqual({
      a2a: { method: "SendMessage" },
    });
  });
});
