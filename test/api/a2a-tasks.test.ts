import { beforeAll, describe, expect, it } from "vitest";
import { answer } from "../fakes/openai";
import { rpc, userMessage } from "./a2a-rpc";
import { call, putAgents } from "./helpers";
import { script } from "./run-fixtures";

/**
 * What an A2A task shows of its messages and how ListTasks finds tasks (docs/a2a.md): a
 * client's message keeps the client's `messageId` in the task's history; Relay's own messages
 * keep Relay's ids. The model is faked; sessions and D1 are real.
 */

const AGENTS = [
  { name: "desk", description: "Answers" },
  { name: "other", description: "Another agent" },
];

beforeAll(async () => {
  await putAgents(AGENTS);
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
});

describe("the client's messageId", () => {
  it("is the user message's id in the SendMessage answer, GetTask and ListTasks; Relay's answer keeps its own id", async () => {
    script({ desk: [answer("First answer."), answer("Second answer.")] });
    const first = userMessage("hello");
    const sent = (await rpc("/a2a/desk", "SendMessage", first)).result.task;
    expect(sent.history.map((m: { messageId: string; role: string }) => [m.role, m.messageId])).toEqual([
      ["ROLE_USER", first.message.messageId],
      ["ROLE_AGENT", expect.stringMatching(/^msg_/)],
    ]);
    const second = userMessage("again", { contextId: sent.contextId });
    const next = (await rpc("/a2a/desk", "SendMessage", second)).result.task;

    const got = (await rpc("/a2a/desk", "GetTask", { id: next.id, historyLength: 2 })).result;
    expect(got.history.map((m: { messageId: string }) => m.messageId)).toEqual([
      second.message.messageId,
      expect.stringMatching(/^msg_/),
    ]);
    const listed = (await rpc("/a2a/desk", "ListTasks", { contextId: sent.contextId, historyLength: 1 })).result;
    expect(
      listed.tasks.map((t: { history: { messageId: string; role: string }[] }) => t.history.map((m) => m.role)),
    ).toEqual([["ROLE_AGENT"], ["ROLE_AGENT"]]);
    const withUser = (await rpc("/a2a/desk", "ListTasks", { contextId: sent.contextId, historyLength: 2 })).result;
    expect(withUser.tasks.map((t: { history: { messageId: string }[] }) => t.history[0]!.messageId)).toEqual([
      second.message.messageId,
      first.message.messageId,
    ]);
    // Relay's own API shows its own ids: the client's id is A2A's, kept beside the message.
    const history = (await call("GET", `/v1/sessions/${sent.contextId}/messages`)).json.items;
    expect(history.map((m: { id: string }) => m.id).every((id: string) => id.startsWith("msg_"))).toBe(true);
  });
});
