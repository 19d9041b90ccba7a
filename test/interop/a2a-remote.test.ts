import { AgentCard, type StreamResponse, TaskState } from "@a2a-js/sdk";
import { describe, expect, it } from "vitest";
import {
  acceptsJson,
  jsonRpcInterface,
  newInput,
  RemoteAnswer,
  transferOf,
  turnMessage,
} from "../../src/interop/a2a-remote";
import { dataPart, textPart } from "../../src/interop/a2a-task";
import type { ChatMessage } from "../../src/providers/types";

/** A remote A2A agent's turn, pure (docs/a2a.md, Remote agents): what Relay sends, what the answer means. */

const status = (state: TaskState, text?: string): StreamResponse => ({
  payload: {
    $case: "statusUpdate",
    value: {
      taskId: "t1",
      contextId: "c1",
      status: {
        state,
        message: text
          ? {
              messageId: "m",
              contextId: "c1",
              taskId: "t1",
              role: 2,
              parts: [textPart(text)],
              metadata: undefined,
              extensions: [],
              referenceTaskIds: [],
            }
          : undefined,
        timestamp: undefined,
      },
      metadata: undefined,
    },
  },
});
const piece = (text: string, append: boolean, id = "a"): StreamResponse => ({
  payload: {
    $case: "artifactUpdate",
    value: {
      taskId: "t1",
      contextId: "c1",
      artifact: {
        artifactId: id,
        name: "",
        description: "",
        parts: [textPart(text)],
        metadata: undefined,
        extensions: [],
      },
      append,
      lastChunk: false,
      metadata: undefined,
    },
  },
});

describe("newInput", () => {
  const user = (content: string): ChatMessage => ({ role: "user", content });
  const assistant = (content: string | null): ChatMessage => ({ role: "assistant", content });
  const tool = (content: string): ChatMessage => ({ role: "tool", content, tool_call_id: "c" });
  it.each<[string, ChatMessage[], string]>([
    ["the user's messages since the last answer", [user("a"), assistant("q?"), user("b"), user("c")], "b\n\nc"],
    [
      "after a handoff: the last user message, not the handoff's output",
      [user("hi"), assistant(null), tool('{"assistant":"x"}')],
      "hi",
    ],
    [
      "a refused handoff of its own: the error",
      [user("hi"), assistant(null), tool("Error: not allowed")],
      "Error: not allowed",
    ],
    ["a first turn", [{ role: "system", content: "s" }, user("hello")], "hello"],
  ])("%s", (_, messages, text) => expect(newInput(messages)).toBe(text));
});

describe("turnMessage", () => {
  const context = { metadata: { handoff_id: "h1" }, from_agent: "a", to_agent: "b" } as never;
  const base = {
    message_id: "turn_1_run",
    text: "hi",
    relay: { tenant: "alpha", target: "agent:b", session_id: "s", run_id: "r", agent: "b" },
  };
  it("sends the handoff context once (a data part when the card takes JSON), and continues the thread's task", () => {
    const first = turnMessage({
      ...base,
      context,
      thread: { context_id: null, task_id: null, handoff_id: null },
      accepts_json: true,
    });
    expect(first.message.parts).toHaveLength(2);
    expect(first.message.metadata?.relay.handoff).toBe(context);
    // The tenant and target travel in the metadata, signed with the message when the card asks.
    expect(first.message.metadata?.relay).toMatchObject({ tenant: "alpha", target: "agent:b" });
    expect(first.handoff_id).toBe("h1");
    const textOnly = turnMessage({
      ...base,
      context,
      thread: { context_id: null, task_id: null, handoff_id: null },
      accepts_json: false,
    });
    expect(textOnly.message.parts).toHaveLength(1);
    const again = turnMessage({
      ...base,
      context,
      thread: { context_id: "c1", task_id: "t1", handoff_id: "h1" },
      accepts_json: true,
    });
    expect(again.message.parts).toHaveLength(1);
    expect(again.message).toMatchObject({ contextId: "c1", taskId: "t1" });
    expect(again.message.metadata?.relay.handoff).toBeUndefined();
  });
});

describe("cards", () => {
  it("needs a JSON-RPC interface of A2A 1.0; JSON input when listed or when no modes are", () => {
    const card = AgentCard.fromJSON({
      supportedInterfaces: [
        { url: "https://x/grpc", protocolBinding: "GRPC", protocolVersion: "1.0" },
        { url: "https://x/old", protocolBinding: "JSONRPC", protocolVersion: "0.3" },
        { url: "https://x/rpc", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      ],
      defaultInputModes: ["text/plain"],
    });
    expect(jsonRpcInterface(card)).toEqual({ ok: true, url: "https://x/rpc" });
    expect(jsonRpcInterface(AgentCard.fromJSON({ supportedInterfaces: [] })).ok).toBe(false);
    expect(acceptsJson(card)).toBe(false);
    expect(acceptsJson(AgentCard.fromJSON({}))).toBe(true);
  });
});

describe("RemoteAnswer", () => {
  it("a streamed answer: pieces handed on as they come, joined into the answer", () => {
    const pieces: string[] = [];
    const answer = new RemoteAnswer((t) => pieces.push(t));
    for (const e of [
      status(TaskState.TASK_STATE_WORKING),
      piece("Order ", false),
      piece("42.", true),
      status(TaskState.TASK_STATE_COMPLETED),
    ])
      answer.add(e);
    expect(pieces).toEqual(["Order ", "42."]);
    expect(answer.outcome()).toEqual({ kind: "answer", text: "Order 42.", transfer: null, context_id: "c1" });
  });

  it("input required: the status message is the question, with the task to continue", () => {
    const answer = new RemoteAnswer();
    answer.add(status(TaskState.TASK_STATE_INPUT_REQUIRED, "Which order?"));
    expect(answer.outcome()).toEqual({ kind: "input", text: "Which order?", task_id: "t1", context_id: "c1" });
  });

  it("a handoff by data part; a failed, rejected or cancelled task; a task still working", () => {
    const handoff = new RemoteAnswer();
    handoff.addReply({
      messageId: "m",
      contextId: "c1",
      taskId: "",
      role: 2,
      parts: [textPart("over to you"), dataPart({ relay: { transfer_to: "triage", reason: "not mine" } })],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    });
    expect(handoff.outcome()).toEqual({
      kind: "answer",
      text: "over to you",
      transfer: { target: "triage", reason: "not mine" },
      context_id: "c1",
    });
    for (const state of [TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_REJECTED, TaskState.TASK_STATE_CANCELED]) {
      const failed = new RemoteAnswer();
      failed.add(status(state, "db down"));
      expect(failed.outcome()).toMatchObject({ kind: "failed" });
    }
    const working = new RemoteAnswer();
    working.add(status(TaskState.TASK_STATE_WORKING));
    expect(working.openTask).toEqual({ id: "t1", context_id: "c1" });
    expect(new RemoteAnswer().outcome().kind).toBe("failed");
  });

  it("transferOf reads only Relay's data part", () => {
    expect(transferOf([dataPart({ relay: { transfer_to: "" } }), dataPart({ other: 1 }), textPart("x")])).toBeNull();
  });
});
