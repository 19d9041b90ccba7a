import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { RunStore } from "../../durable-objects/session/runs/run-store";
import { sessionRpc } from "../../src/rpc/stubs";
import { newRun } from "../../src/runtime/run-record";
import { advanceClock, d1Audit, drainDue, flushOutbox, sessionStub } from "../durable-objects/helpers";
import { eventually } from "../eventually";
import { answer, callTool, callTools, delayed, fakeOpenAI, httpError } from "../fakes/openai";
import { llmServer } from "../fakes/server";
import {
  delayed as delayedHook,
  fakeWebhookAgent,
  replyOutput,
  replyText,
  replyToolCalls,
  type WebhookReply,
} from "../fakes/webhook-agent";
import { shardOf } from "../shards";
import type { SessionDO } from "../worker";
import { expectForgedCursorsRefused } from "./forged-cursors";
import { call, putSecret } from "./helpers";
import { agentOf, protocolErrors, script, toolNames } from "./run-fixtures";

/**
 * The turn loop end to end (docs/runs.md): a user message runs the current agent through an
 * OpenAI-compatible endpoint (faked at the fetch boundary, speaking the real protocol), and
 * the agents hand off by calling transfer_to_* / return_to_* tools that Relay intercepts.
 */

const AGENTS = [
  {
    name: "front",
    title: "Front desk",
    description: "Greets and sorts requests",
    handoffs: ["middle", "forms", { to: "hidden", condition: "vip == true" }, "off", "person"],
  },
  { name: "middle", title: "Middle office", description: "Accounts and billing questions", handoffs: ["back"] },
  { name: "back", title: "Back office", description: "Deep technical problems" },
  {
    name: "forms",
    description: "Order changes",
    handoffs: [],
  },
  { name: "hidden", description: "VIP desk" },
  { name: "off", description: "Retired desk", enabled: false },
  { name: "person", kind: "human", description: "A person on the team", timeout_s: 60 },
  { name: "slow", description: "Slow model", timeout_s: 1 },
  {
    name: "hook",
    kind: "webhook",
    endpoint: "https://hook.test/agent",
    signing_secret: "hook-secret",
    description: "The customer's own agent",
    handoffs: ["middle"],
    timeout_s: 1,
  },
];

/** The secret the `hook` agent's deliveries are signed with, from alpha's vault. */
const HOOK_SECRET = "whsec_hAp7GYE+aOxthDBDkQL/nSf7u3leKSjPlh4ozCWztNA=";

beforeAll(async () => {
  // The forms entry takes typed input: an order id.
  AGENTS[0]!.handoffs = [
    "middle",
    {
      to: "forms",
      input_schema: {
        type: "object",
        properties: { order_id: { type: "string", pattern: "^o-" } },
        required: ["order_id"],
        additionalProperties: false,
      },
    },
    { to: "hidden", condition: "vip == true" },
    "off",
    "person",
  ] as never;
  await putSecret("hook-secret", HOOK_SECRET);
  for (const agent of AGENTS) {
    const res = await call("PUT", `/v1/agents/${agent.name}`, agent);
    if (res.status >= 300) throw new Error(`PUT ${agent.name}: ${JSON.stringify(res.json)}`);
  }
  // Agents' turns go to the OpenAI-compatible endpoint (the fake) for this tenant.
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
});

async function session(agent = "front", metadata: Record<string, unknown> = {}, ttl_s = 3 * 86_400): Promise<string> {
  const res = await call("POST", "/v1/sessions", { agent, metadata, ttl_s });
  if (res.status !== 201) throw new Error(JSON.stringify(res.json));
  return res.json.id;
}

const say = (id: string, content: string) => call("POST", `/v1/sessions/${id}/messages`, { role: "user", content });

describe("the turn loop", () => {
  it("runs a chain A → B → C in one run: each target continues the run, every call answered", async () => {
    const fake = script({
      front: [callTool("transfer_to_middle", { reason: "billing" })],
      middle: [callTool("transfer_to_back", { reason: "too technical" })],
      back: [answer("Fixed it.")],
    });
    const id = await session();
    const res = await say(id, "my invoice crashes the app");
    expect(res.status).toBe(200);
    expect(res.json.run).toMatchObject({
      status: "completed",
      output: "Fixed it.",
      output_agent: "back",
      agent: "back",
      turns: 3,
    });
    expect(res.json.run.handoffs).toHaveLength(2);
    expect(
      res.json.run.events.map((e: { event_type: string; agent_name: string }) => `${e.event_type}:${e.agent_name}`),
    ).toEqual([
      "agent_start:front",
      "llm_call:front",
      "tool_call:front",
      "handoff:front",
      "agent_start:middle",
      "llm_call:middle",
      "tool_call:middle",
      "handoff:middle",
      "agent_start:back",
      "llm_call:back",
      "agent_complete:back",
    ]);
    expect(fake.requests.map(agentOf)).toEqual(["front", "middle", "back"]);
    for (const req of fake.requests) expect(protocolErrors(req)).toEqual([]);
    // What each agent was offered: its whitelist (minus the disabled, the false condition and the
    // stack), the way back, a person.
    expect(toolNames(fake.requests[0]!)).toEqual([
      "escalate_to_human",
      "transfer_to_forms",
      "transfer_to_middle",
      "transfer_to_person",
    ]);
    expect(toolNames(fake.requests[1]!)).toEqual(["escalate_to_human", "return_to_front", "transfer_to_back"]);
    expect(fake.requests[0]!.body.tool_choice).toBe("auto");
    // The target's prompt carries the handoff preamble.
    expect(fake.requests[2]!.body.messages[0]!.content).toContain(
      "Agent 'middle' has handed the conversation over to you ('back')",
    );
    const view = (await call("GET", `/v1/sessions/${id}`)).json;
    expect(view).toMatchObject({
      current_agent: "back",
      handoff_stack: ["front", "middle", "back"],
      in_flight_handoff: null,
    });
  });

  it("hands back with return_to_<agent>", async () => {
    const fake = fakeOpenAI({
      baseUrl: "https://llm.test/v1",
      respond: (req) => {
        const agent = agentOf(req);
        const back = req.body.messages.some(
          (m) => m.role === "system" && String(m.content).includes("has returned the conversation to you"),
        );
        if (agent === "front")
          return back ? answer("Back at the front desk.") : callTool("transfer_to_middle", { reason: "billing" });
        return callTool("return_to_front", { reason: "not mine after all" });
      },
    });
    llmServer.use(fake.handler);
    const id = await session();
    const res = await say(id, "question");
    expect(res.json.run).toMatchObject({
      status: "completed",
      output: "Back at the front desk.",
      output_agent: "front",
    });
    expect((await call("GET", `/v1/sessions/${id}`)).json.handoff_stack).toEqual(["front"]);
  });

  it("several handoff calls in one response: the first runs, the others get an error and stay out of the target's view", async () => {
    const fake = script({
      front: [
        callTools(
          { name: "transfer_to_middle", arguments: { reason: "first" } },
          { name: "transfer_to_person", arguments: { reason: "second" } },
        ),
      ],
      middle: [answer("Middle here.")],
    });
    const id = await session();
    const res = await say(id, "help");
    expect(res.json.run).toMatchObject({ status: "completed", output_agent: "middle" });
    const history = (await call("GET", `/v1/sessions/${id}/messages`)).json.items;
    const ignored = history.find(
      (i: { role: string; tool_name?: string }) => i.role === "tool" && i.tool_name === "transfer_to_person",
    );
    expect(ignored.content).toContain("Only one handoff per turn");
    const middleSaw = JSON.stringify(fake.requests[1]!.body.messages);
    expect(middleSaw).not.toContain("transfer_to_person");
    expect(middleSaw).toContain("transfer_to_middle");
    expect(protocolErrors(fake.requests[1]!)).toEqual([]);
    expect((await call("GET", `/v1/sessions/${id}`)).json.current_agent).toBe("middle");
  });

  it("a hallucinated or forbidden target comes back as a tool error naming the allowed targets; the model corrects itself", async () => {
    const fake = script({
      front: [
        callTool("transfer_to_ghost", { reason: "?" }),
        callTool("transfer_to_back", { reason: "skip a step" }),
        answer("I'll handle it myself."),
      ],
    });
    const id = await session();
    const res = await say(id, "hello");
    expect(res.json.run).toMatchObject({
      status: "completed",
      output: "I'll handle it myself.",
      output_agent: "front",
      turns: 3,
    });
    const outputs = fake.requests[2]!.body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    expect(outputs).toHaveLength(2);
    for (const output of outputs)
      expect(output).toContain("Your allowed targets are: middle, forms, hidden, off, person");
    expect((await call("GET", `/v1/sessions/${id}`)).json.current_agent).toBe("front");
  });

  it("a handoff the target refuses (at capacity) is on record as the run's refused call, with its code", async () => {
    await call("PUT", "/v1/agents/cap-target", {
      name: "cap-target",
      description: "One at a time",
      max_concurrent_sessions: 1,
    });
    await call("PUT", "/v1/agents/cap-front", { name: "cap-front", description: "Asks", handoffs: ["cap-target"] });
    await session("cap-target");
    script({ "cap-front": [callTool("transfer_to_cap_target", { reason: "busy?" }), answer("Staying with you.")] });
    const id = await session("cap-front");
    expect((await say(id, "hello")).json.run).toMatchObject({ status: "completed", output_agent: "cap-front" });
    const audit = (await call("GET", `/v1/sessions/${id}/audit?limit=200`)).json.items;
    const refused = audit.filter((r: { action: string }) => r.action === "run.handoff_requested");
    expect(refused).toHaveLength(1);
    expect(refused[0].details).toMatchObject({
      tool_name: "transfer_to_cap_target",
      target: "cap-target",
      accepted: false,
      error_code: expect.any(String),
    });
  });

  it("invalid typed input is an error the model can correct; the valid input reaches the target's context", async () => {
    script({
      front: [
        callTool("transfer_to_forms", { reason: "change order", input: { order_id: 42 } }),
        callTool("transfer_to_forms", { reason: "change order", input: { order_id: "o-7" } }),
      ],
      forms: [answer("Order o-7 changed.")],
    });
    const id = await session();
    const res = await say(id, "change my order");
    expect(res.json.run).toMatchObject({ status: "completed", output_agent: "forms", turns: 3 });
    const history = (await call("GET", `/v1/sessions/${id}/messages`)).json.items;
    const refused = history.filter((i: { role: string }) => i.role === "tool")[0];
    expect(refused.content).toContain("does not match the schema");
    const context = (await call("GET", `/v1/sessions/${id}`)).json.last_handoff_context;
    expect(context).toMatchObject({
      from_agent: "front",
      to_agent: "forms",
      reason: "change order",
      payload: { input: { order_id: "o-7" } },
    });
  });

  it("an ordinary tool call beside a handoff keeps its output; the handoff runs", async () => {
    const fake = script({
      front: [
        callTools(
          { name: "lookup_order", arguments: { id: 1 } },
          { name: "transfer_to_middle", arguments: { reason: "billing" } },
        ),
      ],
      middle: [answer("ok")],
    });
    const id = await session();
    await say(id, "where is my order");
    const middleSaw = fake.requests[1]!.body.messages;
    expect(
      middleSaw.find(
        (m) => m.role === "tool" && String(m.content).includes("'lookup_order' is not a tool you may use"),
      ),
    ).toBeDefined();
    expect(protocolErrors(fake.requests[1]!)).toEqual([]);
  });

  it("stops at max_turns with MAX_TURNS_EXCEEDED recorded", async () => {
    script({ front: [callTool("lookup", {}), callTool("lookup", {}), callTool("lookup", {})] });
    const id = await session("front", { max_turns: 2 });
    const res = await say(id, "loop");
    expect(res.json.run).toMatchObject({ status: "failed", turns: 2, error: { code: "MAX_TURNS_EXCEEDED" } });
    await flushOutbox(sessionStub("alpha", id).stub);
    expect((await d1Audit(id)).map((r) => r.action)).toContain("run.failed");
  });

  it("a model timeout or 5xx fails the run with its code; the session stays as it was", async () => {
    script({ slow: [delayed(1_500, answer("too late"))], front: [httpError(503)] });
    const slow = await session("slow");
    const timedOut = await say(slow, "hi");
    expect(timedOut.json.run).toMatchObject({ status: "failed", error: { code: "MODEL_TIMEOUT" } });
    const down = await session();
    const failed = await say(down, "hi");
    expect(failed.json.run).toMatchObject({ status: "failed", error: { code: "MODEL_ERROR" } });
    expect(failed.json.run.events.at(-1)).toMatchObject({ event_type: "agent_error", error: "MODEL_ERROR" });
    const view = (await call("GET", `/v1/sessions/${down}`)).json;
    expect(view).toMatchObject({ current_agent: "front", history_length: 1, in_flight_handoff: null });
    // The next message runs again.
    script({ front: [answer("back up")] });
    expect((await say(down, "again")).json.run).toMatchObject({ status: "completed", output: "back up" });
  });

  it("after_turn: return_to_root hands the session back to the root once the run is answered", async () => {
    script({
      front: [callTool("transfer_to_middle", { reason: "billing" })],
      middle: [callTool("transfer_to_back", { reason: "deeper" })],
      back: [answer("done")],
    });
    const res = await call("POST", "/v1/sessions", {
      agent: "front",
      after_turn: "return_to_root",
      max_turns: 5,
      ttl_s: 3600,
    });
    expect(res.json.metadata).toEqual({ after_turn: "return_to_root", max_turns: 5 });
    const ran = await say(res.json.id, "question");
    expect(ran.json.run).toMatchObject({ status: "completed", output_agent: "back" });
    const view = (await call("GET", `/v1/sessions/${res.json.id}`)).json;
    expect(view).toMatchObject({ current_agent: "front", handoff_stack: ["front"] });
    // Without it, the agent that answered keeps the session.
    script({ front: [callTool("transfer_to_middle", { reason: "billing" })], middle: [answer("mine now")] });
    const stay = await session();
    await say(stay, "question");
    expect((await call("GET", `/v1/sessions/${stay}`)).json.current_agent).toBe("middle");
    expect((await call("POST", "/v1/sessions", { agent: "front", after_turn: "sometimes" })).json.error.code).toBe(
      "VALIDATION_FAILED",
    );
  });

  it("one run at a time: of 10 parallel messages one runs, the others get 409 RUN_IN_PROGRESS", async () => {
    script({ front: [delayed(200, answer("done"))] });
    const id = await session();
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => say(id, `message ${i}`)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(9);
    for (const r of results.filter((r) => r.status === 409)) expect(r.json.error.code).toBe("RUN_IN_PROGRESS");
    expect((await call("GET", `/v1/sessions/${id}`)).json.history_length).toBe(2);
  });

  it("keeps message content out of the D1 audit; the trace lives with the session", async () => {
    script({ front: [callTool("transfer_to_middle", { reason: "billing" })], middle: [answer("the secret answer")] });
    const id = await session();
    await say(id, "my secret question");
    await flushOutbox(sessionStub("alpha", id).stub);
    const { results } = await (await shardOf("alpha"))
      .prepare("SELECT details FROM audit_log WHERE session_id = ?1")
      .bind(id)
      .all<{ details: string }>();
    expect(results.length).toBeGreaterThan(5);
    expect(JSON.stringify(results)).not.toContain("secret");
    const trace = (await call("GET", `/v1/sessions/${id}/trace`)).json;
    expect(trace.items.find((e: { event_type: string }) => e.event_type === "handoff")).toMatchObject({
      correlation_id: expect.stringMatching(/^run_/),
      details: { from_agent: "front", to_agent: "middle", handoff_reason: "billing" },
    });
    // Paged by cursor, the pages together are the whole trace, in order.
    const pages: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { json: { items: { event_id: string }[]; next_cursor: string | null } } = await call(
        "GET",
        `/v1/sessions/${id}/trace?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
      );
      expect(page.json.items.length).toBeLessThanOrEqual(2);
      pages.push(...page.json.items.map((e) => e.event_id));
      cursor = page.json.next_cursor;
    } while (cursor !== null);
    expect(pages).toEqual(trace.items.map((e: { event_id: string }) => e.event_id));
    expect(trace.next_cursor).toBeNull();
    const firstPage = await call("GET", `/v1/sessions/${id}/trace?limit=2`);
    await expectForgedCursorsRefused(`/v1/sessions/${id}/trace?limit=2`, firstPage.json.next_cursor);
  });

  it("records a run, not each of its messages; the sessions list counts the whole history", async () => {
    script({ front: [callTool("transfer_to_middle", { reason: "billing" })], middle: [answer("done")] });
    const id = await session();
    await say(id, "hello");
    const history = (await call("GET", `/v1/sessions/${id}/messages?limit=200`)).json.items;
    expect(history.length).toBeGreaterThanOrEqual(3);
    await flushOutbox(sessionStub("alpha", id).stub);
    const actions = (await d1Audit(id)).map((r) => r.action);
    expect(actions).toContain("run.started");
    expect(actions).toContain("run.completed");
    expect(actions).not.toContain("session.message_added");
    // The handoff the run's tool call started names the run and the tool; there is no second record of the call.
    expect(actions).not.toContain("run.handoff_requested");
    const live = (await call("GET", `/v1/sessions/${id}/audit?limit=200`)).json.items;
    const runId = live.find((r: { action: string }) => r.action === "run.started").details.run_id;
    expect(live.find((r: { action: string }) => r.action === "handoff.initiated").details).toMatchObject({
      run_id: runId,
      tool_name: "transfer_to_middle",
    });
    const stored = (await call("GET", `/v1/audit?session_id=${id}&action=handoff.initiated`)).json.items;
    expect(stored[0].details).toMatchObject({ run_id: runId, tool_name: "transfer_to_middle" });
    const listed = (await call("GET", "/v1/sessions?limit=200")).json.items.find((s: { id: string }) => s.id === id);
    expect(listed).toMatchObject({ message_count: history.length, handoff_count: 1 });
  });
});

describe("webhook agents", () => {
  function hook(...replies: WebhookReply[]) {
    const fake = fakeWebhookAgent({
      url: "https://hook.test/agent",
      secret: HOOK_SECRET,
      respond: () => replies.shift() ?? replyText("no reply left", 500),
    });
    llmServer.use(fake.handler);
    return fake;
  }

  it("POSTs the turn signed with Standard Webhooks; its tool calls go through the same interception", async () => {
    const fake = hook(replyToolCalls([{ name: "transfer_to_middle", arguments: { reason: "billing" } }]));
    script({ middle: [answer("Middle here.")] });
    const id = await session("hook");
    const res = await say(id, "invoice question");
    expect(res.json.run).toMatchObject({ status: "completed", output_agent: "middle", output: "Middle here." });
    expect(fake.deliveries).toHaveLength(1);
    const delivery = fake.deliveries[0]!;
    expect(delivery.verified).toBe(true);
    expect(delivery.body).toMatchObject({
      type: "agent.turn",
      data: { session_id: id, agent: "hook", messages: expect.any(Array), tools: expect.any(Array) },
    });
    const data = (
      delivery.body as {
        data: { tools: { function: { name: string } }[]; messages: { role: string; content: string }[] };
      }
    ).data;
    expect(data.tools.map((t) => t.function.name)).toEqual(["transfer_to_middle", "escalate_to_human"]);
    expect(data.messages.at(-1)).toMatchObject({ role: "user", content: "invoice question" });
  });

  it("an output ends the run with the webhook's answer", async () => {
    hook(replyOutput("Handled by your own code."));
    const id = await session("hook");
    expect((await say(id, "hi")).json.run).toMatchObject({
      status: "completed",
      output: "Handled by your own code.",
      output_agent: "hook",
    });
  });

  it("timeout and bad JSON fail the turn with their codes; the session stays consistent", async () => {
    hook(delayedHook(1_500, replyOutput("too late")), replyText("<html>oops</html>"));
    const id = await session("hook");
    expect((await say(id, "one")).json.run).toMatchObject({ status: "failed", error: { code: "WEBHOOK_TIMEOUT" } });
    expect((await say(id, "two")).json.run).toMatchObject({
      status: "failed",
      error: { code: "WEBHOOK_INVALID_REPLY" },
    });
    const view = (await call("GET", `/v1/sessions/${id}`)).json;
    expect(view).toMatchObject({ current_agent: "hook", history_length: 2, in_flight_handoff: null });
  });
});

describe("people: human agents and escalations", () => {
  it("a human agent's turn pauses the run in the inbox; the reply resumes it as the agent's output", async () => {
    script({ front: [callTool("transfer_to_person", { reason: "needs a person" })] });
    const id = await session();
    const paused = await say(id, "I want a person");
    expect(paused.json.run).toMatchObject({
      status: "awaiting_human",
      agent: "person",
      pending: { kind: "human", agent: "person", tool_call_id: null },
    });
    const inbox = (await call("GET", `/v1/sessions/${id}/inbox`)).json.items;
    expect(inbox).toHaveLength(1);
    expect(inbox[0]).toMatchObject({ kind: "human_turn", status: "open", agent: "person", run_id: paused.json.run.id });
    // A second message while the person is away is refused, not queued behind them.
    expect((await say(id, "hello?")).json.error.code).toBe("RUN_IN_PROGRESS");
    const resolved = await sessionRpc(env, "alpha", id).resolveInbox(
      inbox[0].id,
      { reply: "Refund approved." },
      { actor: "ops@example.com", actor_type: "user" },
    );
    expect(resolved.ok && resolved.value.run).toMatchObject({
      status: "completed",
      output: "Refund approved.",
      output_agent: "person",
    });
    const again = await sessionRpc(env, "alpha", id).resolveInbox(
      inbox[0].id,
      { reply: "twice" },
      { actor: "ops", actor_type: "user" },
    );
    expect(!again.ok && again.error.code).toBe("INBOX_ITEM_CLOSED");
  });

  it("an unanswered human turn expires by alarm: the run fails with HUMAN_TIMEOUT", async () => {
    script({ front: [callTool("transfer_to_person", { reason: "needs a person" })] });
    const id = await session();
    await say(id, "person please");
    const { stub } = sessionStub("alpha", id);
    await advanceClock(stub, 61_000);
    await drainDue(stub);
    const items = (await call("GET", `/v1/sessions/${id}/inbox`)).json.items;
    expect(items[0]).toMatchObject({ status: "expired" });
    const run = (await call("GET", `/v1/sessions/${id}/runs/${items[0].run_id}`)).json;
    expect(run).toMatchObject({ status: "failed", error: { code: "HUMAN_TIMEOUT" } });
  });

  it("escalate_to_human: paused for a person; when nobody answers in time the agent is told and carries on", async () => {
    const fake = script({
      front: [
        callTool("escalate_to_human", { reason: "refund over the limit" }),
        answer("Nobody is around; I'll email you."),
      ],
    });
    const id = await session();
    const paused = await say(id, "refund 900");
    expect(paused.json.run).toMatchObject({ status: "awaiting_human", pending: { tool_call_id: expect.any(String) } });
    const { stub } = sessionStub("alpha", id);
    await advanceClock(stub, 24 * 3_600_000 + 1_000);
    await drainDue(stub);
    const run = (await call("GET", `/v1/sessions/${id}/runs/${paused.json.run.id}`)).json;
    expect(run).toMatchObject({ status: "completed", output: "Nobody is around; I'll email you." });
    expect(JSON.stringify(fake.requests[1]!.body.messages)).toContain("no person answered");
    expect(protocolErrors(fake.requests[1]!)).toEqual([]);
  });
});

describe("restarts", () => {
  it("a run a restart left running is resumed by the alarm and finishes", async () => {
    script({ front: [answer("resumed and answered")] });
    const id = await session();
    const { stub } = sessionStub("alpha", id);
    const runId = await runInDurableObject(stub, (instance: SessionDO) => {
      const store = new RunStore(instance.ownSql());
      const run = newRun({
        id: `run_${"0".repeat(26)}_${id}`,
        session_id: id,
        agent: "front",
        max_turns: 10,
        now: Date.now(),
      });
      store.save({ run, step: "turn", resumes: 0 });
      return run.id;
    });
    await evictDurableObject(stub);
    await drainDue(stub);
    // The resumed loop runs on after the alarm returns; give it its turn.
    const run = await eventually(
      async () => (await call("GET", `/v1/sessions/${id}/runs/${runId}`)).json as any,
      (r) => r.status !== "running",
      { what: "the resumed run's end" },
    );
    expect(run).toMatchObject({ status: "completed", output: "resumed and answered" });
  });

  it("a run restarted more often than it may be resumed fails with RUN_INTERRUPTED, never stuck running", async () => {
    const id = await session();
    const { stub } = sessionStub("alpha", id);
    const runId = await runInDurableObject(stub, (instance: SessionDO) => {
      const store = new RunStore(instance.ownSql());
      const run = newRun({
        id: `run_${"1".repeat(26)}_${id}`,
        session_id: id,
        agent: "front",
        max_turns: 10,
        now: Date.now(),
      });
      store.save({ run, step: "turn", resumes: 2 });
      return run.id;
    });
    await evictDurableObject(stub);
    await drainDue(stub);
    expect((await call("GET", `/v1/sessions/${id}/runs/${runId}`)).json).toMatchObject({
      status: "failed",
      error: { code: "RUN_INTERRUPTED" },
    });
  });
});
