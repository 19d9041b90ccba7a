import { exports } from "cloudflare:workers";
import { HttpResponse, http } from "msw";
import { beforeAll, describe, expect, it } from "vitest";
import { SIGNED_REQUESTS_EXTENSION_URI } from "../../src/interop/a2a-remote";
import { readSse } from "../../src/lib/sse";
import { fakeA2aAgent, slowCard } from "../fakes/a2a-agent";
import { answer, callTool } from "../fakes/openai";
import { llmServer } from "../fakes/server";
import { rpc, userMessage } from "./a2a-rpc";
import { ALPHA_KEY, call, newSession, putAgents, say } from "./helpers";
import { script } from "./run-fixtures";

/**
 * Remote A2A agents (docs/a2a.md, Remote agents): an agent of `kind: a2a` is run by
 * SendMessage to the agent its card describes — here the official SDK's server behind msw.
 * Handoffs to it, a request for input that pauses the run until the next message continues
 * the same remote task, a handoff back by Relay's data part, and the bad inputs (a card that
 * is not JSON, one too large, an agent that never answers), each a coded run error.
 */

const CARD = (host: string) => `https://${host}/.well-known/agent-card.json`;

const AGENTS = [
  { name: "triage", description: "Sorts requests", handoffs: ["helper", "plain", "signer"] },
  { name: "helper", kind: "a2a", description: "A remote helper", card_url: CARD("helper.test"), handoffs: ["billing"] },
  { name: "plain", kind: "a2a", description: "Does not stream", card_url: CARD("plain.test") },
  { name: "signer", kind: "a2a", description: "Wants signed requests", card_url: CARD("signer.test") },
  { name: "notjson", kind: "a2a", card_url: CARD("notjson.test") },
  { name: "huge", kind: "a2a", card_url: CARD("huge.test") },
  { name: "silent", kind: "a2a", card_url: CARD("silent.test"), timeout_s: 1 },
  { name: "slowcard", kind: "a2a", card_url: CARD("slowcard.test"), timeout_s: 1 },
  { name: "failing", kind: "a2a", card_url: CARD("failing.test") },
  { name: "billing", description: "Billing" },
];

beforeAll(async () => {
  await putAgents(AGENTS);
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
});

describe("a remote agent in a run", () => {
  it("takes a handoff, asks for input once (the run waits), gets the next message in the same remote task, then answers", async () => {
    const remote = fakeA2aAgent("https://helper.test", [
      { kind: "ask", question: "Which order number?" },
      { kind: "answer", text: "Order 42 ships tomorrow." },
    ]);
    llmServer.use(...remote.handlers);
    script({ triage: [callTool("transfer_to_helper", { reason: "order question" })] });
    const id = await newSession("triage");
    const first = await say(id, "where is my order?");
    // The REST answer carries the remote agent's question, as it asked it.
    expect(first.json.run).toMatchObject({
      status: "awaiting_human",
      agent: "helper",
      pending: { kind: "input", agent: "helper", question: "Which order number?" },
    });
    expect(remote.received[0]).toMatchObject({ text: "where is my order?", continued: null });
    // The handoff's context rides along on the first message.
    expect(remote.received[0]!.data).toEqual([
      {
        relay: {
          handoff: expect.objectContaining({ from_agent: "triage", to_agent: "helper", reason: "order question" }),
        },
      },
    ]);
    const history = (await call("GET", `/v1/sessions/${id}/messages`)).json.items;
    expect(history.at(-1)).toMatchObject({ role: "assistant", agent: "helper", content: "Which order number?" });

    const second = await say(id, "it is 42");
    expect(second.status).toBe(200);
    expect(second.json.run).toMatchObject({
      id: first.json.run.id,
      status: "completed",
      output: "Order 42 ships tomorrow.",
      output_agent: "helper",
    });
    expect(remote.received[1]).toMatchObject({
      text: "it is 42",
      continued: first.json.run.pending.task_id,
      contextId: first.json.run.pending.context_id,
      data: [],
    });
    const llm = second.json.run.events.filter((e: { event_type: string }) => e.event_type === "llm_call");
    expect(llm.at(-1).details).toMatchObject({ executor: "a2a", model: "Remote Helper", streamed: true });
  });

  it("keeps one remote context per session; hands back by Relay's data part, and the run goes on with the agent it returns to", async () => {
    const remote = fakeA2aAgent("https://helper.test", [
      { kind: "answer", text: "Hello from the remote." },
      { kind: "handoff", to: "triage", reason: "not mine", text: "Passing you back." },
    ]);
    llmServer.use(...remote.handlers);
    script({ triage: [callTool("transfer_to_helper", { reason: "remote stuff" }), answer("Triage here again.")] });
    const id = await newSession("triage");
    expect((await say(id, "hi")).json.run).toMatchObject({ status: "completed", output_agent: "helper" });
    const back = await say(id, "actually, billing");
    expect(back.json.run).toMatchObject({ status: "completed", output: "Triage here again.", output_agent: "triage" });
    expect(back.json.run.handoffs).toHaveLength(1);
    // One remote context per session: the second message went to the context the first one opened.
    expect(remote.received[1]!.contextId).toBe(remote.received[0]!.contextId);
    expect(remote.received[1]!.continued).toBeNull();
    const handoff = back.json.run.events.find((e: { event_type: string }) => e.event_type === "handoff");
    expect(handoff.details).toMatchObject({ from_agent: "helper", to_agent: "triage", handoff_reason: "not mine" });
  });

  it("an agent whose card does not stream is sent SendMessage; a card that asks for signing gets signed requests", async () => {
    const plain = fakeA2aAgent("https://plain.test", [{ kind: "answer", text: "plain answer" }], { streaming: false });
    const signer = fakeA2aAgent("https://signer.test", [{ kind: "answer", text: "signed answer" }], {
      extensions: [SIGNED_REQUESTS_EXTENSION_URI],
    });
    llmServer.use(...plain.handlers, ...signer.handlers);
    script({ triage: [callTool("transfer_to_plain", {})], billing: [] });
    const a = await newSession("plain");
    const res = await say(a, "hello");
    expect(res.json.run).toMatchObject({ status: "completed", output: "plain answer" });
    const llm = res.json.run.events.find((e: { event_type: string }) => e.event_type === "llm_call");
    expect(llm.details.streamed).toBe(false);
    expect(plain.received[0]!.headers["webhook-signature"]).toBeUndefined();
    const b = await newSession("signer");
    expect((await say(b, "hello")).json.run).toMatchObject({ status: "completed", output: "signed answer" });
    expect(signer.received[0]!.headers["webhook-signature"]).toMatch(/^v1,/);
    expect(signer.received[0]!.headers["webhook-id"]).toMatch(/^turn_1_run_/);
  });
});

describe("a remote agent's question through A2A", () => {
  it("is the status message of the waiting task: in the SendMessage answer, GetTask and ListTasks", async () => {
    const remote = fakeA2aAgent("https://helper.test", [
      { kind: "ask", question: "Which order number?" },
      { kind: "answer", text: "Order 42 ships tomorrow." },
    ]);
    llmServer.use(...remote.handlers);
    script({ triage: [callTool("transfer_to_helper", { reason: "order question" })] });
    const statusText = (task: { status: { message?: { parts: { text?: string }[] } } }) =>
      task.status.message?.parts.map((p) => p.text ?? "").join("");
    const asked = (await rpc("/a2a/triage", "SendMessage", userMessage("where is my order?"))).result.task;
    expect(asked.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    expect(statusText(asked)).toBe("Which order number?");
    const got = (await rpc("/a2a/triage", "GetTask", { id: asked.id })).result;
    expect(statusText(got)).toBe("Which order number?");
    expect(got.status.message.metadata).toEqual({ relay: { agent: "helper" } });
    const listed = (await rpc("/a2a/triage", "ListTasks", { contextId: asked.contextId })).result;
    expect(statusText(listed.tasks[0])).toBe("Which order number?");
    // The answer continues the same task, which ends with the remote agent's answer; the client's
    // message keeps its messageId there too.
    const reply = userMessage("42", { taskId: asked.id, contextId: asked.contextId });
    const answered = (await rpc("/a2a/triage", "SendMessage", reply)).result.task;
    expect(answered).toMatchObject({ id: asked.id, status: { state: "TASK_STATE_COMPLETED" } });
    const users = answered.history.filter((m: { role: string }) => m.role === "ROLE_USER");
    expect(users.at(-1)).toMatchObject({ messageId: reply.message.messageId, parts: [{ text: "42" }] });
  });
});

describe("a remote agent's streamed answer", () => {
  it("reaches Relay's clients as message.delta pieces, then the whole message under the same id", async () => {
    llmServer.use(...fakeA2aAgent("https://helper.test", [{ kind: "answer", text: "one two three four" }]).handlers);
    const id = await newSession("helper");
    const response = await (exports as any).default.fetch(
      new Request(`http://relay.test/v1/sessions/${id}/messages`, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${ALPHA_KEY}`,
          Accept: "text/event-stream",
          "Content-Type": "application/json",
        },
        body: JSON.stringify({ role: "user", content: "count" }),
      }),
    );
    const frames: { event: string; data: any }[] = [];
    for await (const frame of readSse(response.body!))
      frames.push({ event: frame.event, data: JSON.parse(frame.data) });
    const deltas = frames.filter((f) => f.event === "message.delta").map((f) => f.data.data);
    expect(deltas.map((d) => d.delta).join("")).toBe("one two three four");
    expect(deltas.length).toBeGreaterThan(1);
    const message = frames.find((f) => f.event === "message" && f.data.data.role === "assistant");
    expect(message!.data.data).toMatchObject({
      id: deltas[0].message_id,
      content: "one two three four",
      agent: "helper",
    });
    expect(frames.at(-1)!.data.run).toMatchObject({ status: "completed", output: "one two three four" });
  });
});

describe("bad remote agents: a coded run error, nothing stuck", () => {
  it("a card that is not JSON, a card over 64 KiB, a task that fails: each fails the run with its code; the next message runs again", async () => {
    llmServer.use(
      http.get(
        CARD("notjson.test"),
        () => new HttpResponse("<html>not a card</html>", { headers: { "Content-Type": "text/html" } }),
      ),
      http.get(CARD("huge.test"), () => HttpResponse.json({ name: "x".repeat(70 * 1024) })),
      ...fakeA2aAgent("https://failing.test", [
        { kind: "fail", text: "database down" },
        { kind: "fail", text: "database down" },
      ]).handlers,
    );
    const cases: [string, string, string][] = [
      ["notjson", "REMOTE_AGENT_CARD_INVALID", "is not JSON"],
      ["huge", "REMOTE_AGENT_CARD_INVALID", "larger than 65536 bytes"],
      ["failing", "REMOTE_AGENT_ERROR", "database down"],
    ];
    for (const [agent, code, text] of cases) {
      const id = await newSession(agent);
      const res = await say(id, "hello");
      expect(res.status, agent).toBe(200);
      expect(res.json.run, agent).toMatchObject({ status: "failed", error: { code } });
      expect(res.json.run.error.message, agent).toContain(text);
      // Not stuck: the session takes the next message (which fails the same way here).
      expect((await say(id, "again")).json.run.status, agent).toBe("failed");
    }
  });

  it("a remote agent that never answers: REMOTE_AGENT_TIMEOUT after the agent's timeout_s", async () => {
    const silent = fakeA2aAgent("https://silent.test", [{ kind: "hang" }]);
    llmServer.use(...silent.handlers);
    const id = await newSession("silent");
    const res = await say(id, "hello?");
    expect(res.json.run).toMatchObject({ status: "failed", error: { code: "REMOTE_AGENT_TIMEOUT" } });
    // A card that takes longer than the turn may.
    llmServer.use(slowCard(CARD("slowcard.test"), 3000));
    const again = await say(await newSession("slowcard"), "hello?");
    expect(again.json.run).toMatchObject({ status: "failed", error: { code: "REMOTE_AGENT_TIMEOUT" } });
  });

  it("a card_url the address policy refuses is refused at registration", async () => {
    const res = await call("PUT", "/v1/agents/local", {
      name: "local",
      kind: "a2a",
      card_url: "http://127.0.0.1:9/card",
    });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: "ENDPOINT_NOT_ALLOWED", details: { field: "card_url" } });
    const missing = await call("PUT", "/v1/agents/nocard", { name: "nocard", kind: "a2a" });
    expect(missing.json.error.code).toBe("VALIDATION_FAILED");
  });
});

describe("what a remote agent's call records in its trace (docs/runs.md, Traces)", () => {
  const callsOf = (run: { events: { event_type: string; details: Record<string, unknown> }[] }, type = "llm_call") =>
    run.events.filter((e) => e.event_type === type).map((e) => e.details);

  it("the method sent and the remote task as it stood when the call returned: input required, then completed", async () => {
    const remote = fakeA2aAgent("https://helper.test", [
      { kind: "ask", question: "Which order number?" },
      { kind: "answer", text: "Order 42 ships tomorrow." },
    ]);
    llmServer.use(...remote.handlers);
    const id = await newSession("helper");
    const first = (await say(id, "where is my order?")).json.run;
    const task_id = first.pending.task_id as string;
    expect(callsOf(first).at(-1)!.a2a).toEqual({
      method: "SendStreamingMessage",
      task_id,
      task_state: "TASK_STATE_INPUT_REQUIRED",
    });
    const second = (await say(id, "it is 42")).json.run;
    expect(callsOf(second).at(-1)!.a2a).toEqual({
      method: "SendStreamingMessage",
      task_id,
      task_state: "TASK_STATE_COMPLETED",
    });
  });

  it("an agent whose card does not stream: SendMessage, with the task its answer names", async () => {
    llmServer.use(
      ...fakeA2aAgent("https://plain.test", [{ kind: "answer", text: "plain answer" }], { streaming: false }).handlers,
    );
    const run = (await say(await newSession("plain"), "hello")).json.run;
    expect(callsOf(run).at(-1)!.a2a).toEqual({
      method: "SendMessage",
      task_id: expect.any(String),
      task_state: "TASK_STATE_COMPLETED",
    });
  });

  it("a failed call keeps what it knew: the task that failed, and the last state of one that never ended", async () => {
    llmServer.use(...fakeA2aAgent("https://failing.test", [{ kind: "fail", text: "database down" }]).handlers);
    const failed = (await say(await newSession("failing"), "hello")).json.run;
    expect(failed.status).toBe("failed");
    expect(callsOf(failed, "agent_error").at(-1)!.a2a).toEqual({
      method: "SendStreamingMessage",
      task_id: expect.any(String),
      task_state: "TASK_STATE_FAILED",
    });
    llmServer.use(...fakeA2aAgent("https://silent.test", [{ kind: "hang" }]).handlers);
    const silent = (await say(await newSession("silent"), "hello?")).json.run;
    expect(silent.error.code).toBe("REMOTE_AGENT_TIMEOUT");
    expect(callsOf(silent, "agent_error").at(-1)!.a2a).toEqual({
      method: "SendStreamingMessage",
      task_id: expect.any(String),
      task_state: "TASK_STATE_WORKING",
    });
  });
});
