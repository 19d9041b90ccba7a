import { evictDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { advanceClock, d1Audit, drainDue, flushOutbox, sessionStub } from "../durable-objects/helpers";
import { eventually } from "../eventually";
import { answer, callTool, callTools, type RecordedRequest } from "../fakes/openai";
import { llmServer } from "../fakes/server";
import { delayed, fakeWebhookAgent, replyText, type WebhookDelivery, type WebhookReply } from "../fakes/webhook-agent";
import { shardOf } from "../shards";
import { expectForgedCursorsRefused } from "./forged-cursors";
import { call, putSecret, streamed } from "./helpers";
import { protocolErrors, script, toolNames } from "./run-fixtures";

/**
 * Tools (docs/runs.md, Tools): the tenant's tool registry, the allowlist, http tools (Standard
 * Webhooks-signed, deadline, size cap), client tools (requires_action and the outputs
 * endpoint), and approvals of tools and handoffs through the inbox. Model, tool endpoints
 * are faked at the fetch boundary; sessions, timers and D1 are real.
 */

const LOOKUP_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

const TOOLS = [
  {
    name: "lookup_order",
    kind: "http",
    description: "Looks an order up",
    url: "https://tools.test/lookup",
    signing_secret: "lookup-secret",
    parameters: {
      type: "object",
      properties: { order_id: { type: "string" } },
      required: ["order_id"],
      additionalProperties: false,
    },
    timeout_s: 1,
    max_response_bytes: 100,
  },
  {
    name: "refund",
    kind: "http",
    description: "Refunds an order",
    url: "https://tools.test/refund",
    parameters: { type: "object", properties: { order_id: { type: "string" }, amount: { type: "number" } } },
  },
  { name: "pick_date", kind: "client", description: "Asks the user to pick a date in the app" },
  { name: "wipe_db", kind: "http", description: "Not for agents", url: "https://tools.test/wipe" },
];

const AGENTS = [
  {
    name: "desk",
    description: "Front desk",
    handoffs: ["billing", { to: "vault", requires_approval: true }],
    tools: {
      allow: ["lookup_order", "refund", "pick_date", "not_in_registry"],
      confirmation: {
        require: ["refund"],
        timeout_s: 60,
        prompt_template: "Refund {{arguments.amount}} on {{arguments.order_id}} for {{agent}}?",
      },
    },
  },
  { name: "billing", description: "Billing" },
  { name: "vault", description: "Vault" },
];

beforeAll(async () => {
  await putSecret("lookup-secret", LOOKUP_SECRET);
  for (const tool of TOOLS) {
    const res = await call("PUT", `/v1/tools/${tool.name}`, tool);
    if (res.status !== 201) throw new Error(`PUT tool ${tool.name}: ${JSON.stringify(res.json)}`);
  }
  for (const agent of AGENTS) {
    const res = await call("PUT", `/v1/agents/${agent.name}`, agent);
    if (res.status >= 300) throw new Error(`PUT ${agent.name}: ${JSON.stringify(res.json)}`);
  }
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
});

/**
 * A tool endpoint that verifies signatures (with the reference package when it has the secret) and
 * records deliveries.
 */
function toolEndpoint(
  url: string,
  respond: (d: WebhookDelivery) => WebhookReply = () => replyText('{"status":"shipped"}'),
  secret?: string,
) {
  const fake = fakeWebhookAgent({ url, respond, ...(secret ? { secret } : {}) });
  llmServer.use(fake.handler);
  return fake;
}

async function session(agent = "desk"): Promise<string> {
  const res = await call("POST", "/v1/sessions", { agent, ttl_s: 3 * 86_400 });
  if (res.status !== 201) throw new Error(JSON.stringify(res.json));
  return res.json.id;
}

const say = (id: string, content: string) => call("POST", `/v1/sessions/${id}/messages`, { role: "user", content });
const history = async (id: string) =>
  (await call("GET", `/v1/sessions/${id}/messages?limit=200`)).json.items as {
    role: string;
    content: string;
    tool_call_id?: string;
  }[];
const toolMessages = (req: RecordedRequest) =>
  req.body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));

describe("the tool registry", () => {
  it("creates (201), replaces (200), reads, lists and deletes tools; unknown is 404 TOOL_NOT_FOUND", async () => {
    const tool = { name: "scratch", kind: "client", description: "one" };
    expect((await call("PUT", "/v1/tools/scratch", tool)).status).toBe(201);
    const replaced = await call("PUT", "/v1/tools/scratch", { ...tool, description: "two" });
    expect(replaced.status).toBe(200);
    expect(replaced.json.definition).toMatchObject({
      name: "scratch",
      kind: "client",
      description: "two",
      parameters: { type: "object", properties: {} },
    });
    expect((await call("GET", "/v1/tools/scratch")).json.definition.description).toBe("two");
    const list = await call("GET", "/v1/tools?limit=2");
    expect(list.json.items.map((t: { definition: { name: string } }) => t.definition.name)).toEqual([
      "lookup_order",
      "pick_date",
    ]);
    expect(list.json.next_cursor).toEqual(expect.any(String));
    const rest = await call("GET", `/v1/tools?limit=50&cursor=${list.json.next_cursor}`);
    const after = rest.json.items.map((t: { definition: { name: string } }) => t.definition.name);
    expect(after).toContain("scratch");
    expect(after.every((name: string) => name > "pick_date")).toBe(true);
    await expectForgedCursorsRefused("/v1/tools?limit=2", list.json.next_cursor);
    expect((await call("DELETE", "/v1/tools/scratch")).status).toBe(204);
    const gone = await call("GET", "/v1/tools/scratch");
    expect(gone.status).toBe(404);
    expect(gone.json.error.code).toBe("TOOL_NOT_FOUND");
    expect((await call("DELETE", "/v1/tools/scratch")).json.error.code).toBe("TOOL_NOT_FOUND");
  });

  it("refuses bad definitions with 400 and stores nothing", async () => {
    const cases: [string, unknown][] = [
      ["no_url", { name: "no_url", kind: "http" }],
      ["client_url", { name: "client_url", kind: "client", url: "https://x.test" }],
      ["transfer_to_x", { name: "transfer_to_x", kind: "client" }],
      ["bad_params", { name: "bad_params", kind: "client", parameters: { type: "string" } }],
      ["other_name", { name: "mismatch", kind: "client" }],
    ];
    for (const [name, body] of cases) {
      const res = await call("PUT", `/v1/tools/${name}`, body);
      expect(res.status, name).toBe(400);
      expect(res.json.error.code, name).toBe("VALIDATION_FAILED");
      expect((await call("GET", `/v1/tools/${name}`)).status, name).not.toBe(200);
    }
  });
});

describe("the allowlist", () => {
  it("offers exactly the allowed registry tools; a call to any other gets an error naming the allowed tools and never runs", async () => {
    const wipe = toolEndpoint("https://tools.test/wipe");
    const fake = script({ desk: [callTool("wipe_db", {}), answer("I can't do that.")] });
    const id = await session();
    const res = await say(id, "wipe everything");
    expect(res.json.run).toMatchObject({ status: "completed", output: "I can't do that." });
    expect(toolNames(fake.requests[0]!)).toEqual([
      "escalate_to_human",
      "lookup_order",
      "pick_date",
      "refund",
      "transfer_to_billing",
      "transfer_to_vault",
    ]);
    const refusal = toolMessages(fake.requests[1]!)[0]!;
    expect(refusal).toContain("'wipe_db' is not a tool you may use; it was not run");
    expect(refusal).toContain("Your allowed tools are: lookup_order, refund, pick_date.");
    expect(wipe.deliveries).toHaveLength(0);
    expect(protocolErrors(fake.requests[1]!)).toEqual([]);
  });
});

describe("http tools", () => {
  it("POSTs the call signed with Standard Webhooks (verified by the reference package) and feeds the reply back", async () => {
    const lookup = toolEndpoint("https://tools.test/lookup", () => replyText('{"status":"shipped"}'), LOOKUP_SECRET);
    const fake = script({ desk: [callTool("lookup_order", { order_id: "o-1" }), answer("It has shipped.")] });
    const id = await session();
    const res = await say(id, "where is o-1?");
    expect(res.json.run).toMatchObject({ status: "completed", output: "It has shipped.", turns: 2 });
    expect(lookup.deliveries).toHaveLength(1);
    const delivery = lookup.deliveries[0]!;
    expect(delivery.verified).toBe(true);
    const callId = (
      fake.requests[1]!.body.messages.find((m) => m.role === "assistant")!.tool_calls as { id: string }[]
    )[0]!.id;
    expect(delivery.headers["webhook-id"]).toBe(callId);
    expect(delivery.body).toMatchObject({
      type: "tool.call",
      data: {
        session_id: id,
        run_id: res.json.run.id,
        agent: "desk",
        tool: "lookup_order",
        tool_call_id: callId,
        arguments: { order_id: "o-1" },
      },
    });
    expect(toolMessages(fake.requests[1]!)).toEqual(['{"status":"shipped"}']);
    expect(protocolErrors(fake.requests[1]!)).toEqual([]);
    const toolEvent = res.json.run.events.find((e: { event_type: string }) => e.event_type === "tool_call");
    expect(toolEvent).toMatchObject({ details: { tool_name: "lookup_order", outcome: "ok" }, error: null });
  });

  it("a timeout, an oversize reply and an HTTP error become error outputs the model sees; the run goes on", async () => {
    const replies: WebhookReply[] = [
      delayed(1_500, replyText("late")),
      replyText("x".repeat(200)),
      replyText("boom", 500),
    ];
    toolEndpoint("https://tools.test/lookup", () => replies.shift()!);
    const fake = script({
      desk: [
        callTools(
          { name: "lookup_order", arguments: { order_id: "a" } },
          { name: "lookup_order", arguments: { order_id: "b" } },
          { name: "lookup_order", arguments: { order_id: "c" } },
        ),
        answer("The order service is down."),
      ],
    });
    const id = await session();
    const res = await say(id, "check a, b and c");
    expect(res.json.run).toMatchObject({ status: "completed", output: "The order service is down." });
    const outputs = toolMessages(fake.requests[1]!);
    // The calls run side by side; which reply each got depends on arrival order, so check the set.
    expect(outputs.some((o) => o.includes("did not answer within 1 s"))).toBe(true);
    expect(outputs.some((o) => o.includes("larger than 100 bytes"))).toBe(true);
    expect(outputs.some((o) => o.includes("failed with HTTP 500: boom"))).toBe(true);
    expect(protocolErrors(fake.requests[1]!)).toEqual([]);
  });

  it("arguments that do not fit the tool's parameters get an error output and are never sent", async () => {
    const lookup = toolEndpoint("https://tools.test/lookup");
    const fake = script({ desk: [callTool("lookup_order", { id: 7 }), answer("Which order?")] });
    const id = await session();
    await say(id, "where is my order");
    expect(lookup.deliveries).toHaveLength(0);
    expect(toolMessages(fake.requests[1]!)[0]).toContain("do not match the parameters of 'lookup_order'");
  });
});

describe("client tools", () => {
  it("pause the run in requires_action; bad outputs are 400 with nothing changed; the right ones resume it", async () => {
    const fake = script({
      desk: [
        callTools({ name: "pick_date", arguments: {} }, { name: "pick_date", arguments: { hint: "soon" } }),
        answer("Booked for the 3rd."),
      ],
    });
    const id = await session();
    const paused = await say(id, "book me in");
    expect(paused.status).toBe(200);
    expect(paused.json.run).toMatchObject({
      status: "requires_action",
      pending: { kind: "client_tools", agent: "desk" },
    });
    const pending = paused.json.run.pending.tool_calls as { id: string; name: string }[];
    expect(pending.map((c) => c.name)).toEqual(["pick_date", "pick_date"]);
    const [a, b] = pending.map((c) => c.id);
    const before = (await history(id)).length;
    const bad: [string, unknown, Record<string, unknown>][] = [
      ["missing", [{ tool_call_id: a, output: "x" }], { missing: [b] }],
      [
        "extra",
        [
          { tool_call_id: a, output: "x" },
          { tool_call_id: b, output: "y" },
          { tool_call_id: "call_nope", output: "z" },
        ],
        { unknown: ["call_nope"] },
      ],
      [
        "duplicate",
        [
          { tool_call_id: a, output: "x" },
          { tool_call_id: a, output: "x" },
          { tool_call_id: b, output: "y" },
        ],
        { duplicate: [a] },
      ],
    ];
    for (const [what, outputs, details] of bad) {
      const res = await call("POST", `/v1/sessions/${id}/tool-outputs`, { outputs });
      expect(res.status, what).toBe(400);
      expect(res.json.error.code, what).toBe("TOOL_OUTPUTS_MISMATCH");
      expect(res.json.error.details, what).toMatchObject(details);
    }
    expect((await call("POST", `/v1/sessions/${id}/tool-outputs`, { outputs: [] })).json.error.code).toBe(
      "VALIDATION_FAILED",
    );
    expect((await history(id)).length).toBe(before);
    expect((await call("GET", `/v1/sessions/${id}/runs/${paused.json.run.id}`)).json.status).toBe("requires_action");
    // A message while the client owes outputs is refused, not queued.
    expect((await say(id, "hello?")).json.error.code).toBe("RUN_IN_PROGRESS");

    const resumed = await call("POST", `/v1/sessions/${id}/tool-outputs`, {
      outputs: [
        { tool_call_id: b, output: { date: "2026-12-03" } },
        { tool_call_id: a, output: "3rd" },
      ],
    });
    expect(resumed.status).toBe(200);
    expect(resumed.json.run).toMatchObject({ status: "completed", output: "Booked for the 3rd.", pending: null });
    expect(toolMessages(fake.requests[1]!).sort()).toEqual(["3rd", '{"date":"2026-12-03"}']);
    expect(protocolErrors(fake.requests[1]!)).toEqual([]);
    const again = await call("POST", `/v1/sessions/${id}/tool-outputs`, {
      outputs: [{ tool_call_id: a, output: "x" }],
    });
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe("RUN_NOT_AWAITING_OUTPUTS");
  });

  it("outputs that never come fail the run by alarm with TOOL_OUTPUTS_TIMEOUT", async () => {
    script({ desk: [callTool("pick_date", {})] });
    const id = await session();
    const paused = await say(id, "book me in");
    expect(paused.json.run.status).toBe("requires_action");
    const { stub } = sessionStub("alpha", id);
    await advanceClock(stub, 10 * 60_000 + 1_000);
    await drainDue(stub);
    expect((await call("GET", `/v1/sessions/${id}/runs/${paused.json.run.id}`)).json).toMatchObject({
      status: "failed",
      error: { code: "TOOL_OUTPUTS_TIMEOUT" },
    });
  });
});

describe("approvals", () => {
  async function pausedOnRefund(id: string) {
    const paused = await say(id, "refund o-9");
    expect(paused.json.run).toMatchObject({
      status: "awaiting_approval",
      pending: { kind: "approval", agent: "desk" },
    });
    const items = (await call("GET", `/v1/sessions/${id}/inbox`)).json.items;
    const item = items.find((i: { kind: string; status: string }) => i.kind === "approval" && i.status === "open");
    return { run: paused.json.run, item };
  }

  it("a gated tool pauses the run with an inbox item (the prompt template filled in); approve runs it and the run goes on", async () => {
    const refund = toolEndpoint("https://tools.test/refund", () => replyText("refunded"));
    const fake = script({ desk: [callTool("refund", { order_id: "o-9", amount: 40 }), answer("Refunded 40.")] });
    const id = await session();
    const { run, item } = await pausedOnRefund(id);
    expect(item).toMatchObject({
      kind: "approval",
      agent: "desk",
      run_id: run.id,
      reason: "Refund 40 on o-9 for desk?",
      details: { tool_name: "refund", arguments: { order_id: "o-9", amount: 40 } },
    });
    expect(run.pending.approvals).toEqual([
      { inbox_id: item.id, tool_call: expect.objectContaining({ name: "refund" }), decision: null },
    ]);
    expect(refund.deliveries).toHaveLength(0);
    // A question's answer is not an approval's.
    const mismatch = await call("POST", `/v1/inbox/${item.id}/resolve`, { reply: "sure" });
    expect(mismatch.status).toBe(400);
    expect(mismatch.json.error.code).toBe("INBOX_ANSWER_MISMATCH");
    const approved = await call("POST", `/v1/inbox/${item.id}/resolve`, { decision: "approve", by: "ops@example.com" });
    expect(approved.status).toBe(200);
    expect(approved.json.item).toMatchObject({
      status: "resolved",
      decision: "approve",
      resolved_by: "ops@example.com",
    });
    expect(approved.json.run).toMatchObject({ status: "completed", output: "Refunded 40." });
    expect(refund.deliveries).toHaveLength(1);
    expect(toolMessages(fake.requests[1]!)).toEqual(["refunded"]);
    const outcomes = approved.json.run.events
      .filter((e: { event_type: string }) => e.event_type === "tool_call")
      .map((e: { details: { outcome: string } }) => e.details.outcome);
    expect(outcomes).toEqual(["approval required", "approved by ops@example.com", "ok"]);
    // The tenant-wide inbox lists approvals once the session's audit has reached D1.
    await flushOutbox(sessionStub("alpha", id).stub);
    const listed = (await call("GET", `/v1/inbox?kind=approval&session_id=${id}`)).json.items;
    expect(listed).toEqual([
      expect.objectContaining({ id: item.id, kind: "approval", status: "resolved", resolved_by: "ops@example.com" }),
    ]);
  });

  it("keeps the call's arguments out of the audit trail and the inbox list; the item itself has them", async () => {
    toolEndpoint("https://tools.test/refund", () => replyText("refunded"));
    script({ desk: [callTool("refund", { order_id: "o-secret-7731", amount: 40 }), answer("Done.")] });
    const id = await session();
    const { item } = await pausedOnRefund(id);
    expect(item.reason).toBe("Refund 40 on o-secret-7731 for desk?");
    const live = (await call("GET", `/v1/sessions/${id}/audit?limit=200`)).json.items;
    await flushOutbox(sessionStub("alpha", id).stub);
    const { results: stored } = await (await shardOf("alpha"))
      .prepare("SELECT action, details FROM audit_log WHERE session_id = ?1")
      .bind(id)
      .all<{ action: string; details: string }>();
    const created = stored.find((r) => r.action === "inbox.item_created");
    expect(JSON.parse(created!.details)).toMatchObject({
      reason: "'desk' wants to call 'refund'.",
      tool_name: "refund",
    });
    expect(JSON.stringify(live)).not.toContain("o-secret-7731");
    expect(JSON.stringify(stored)).not.toContain("o-secret-7731");
    const listed = (await call("GET", `/v1/inbox?kind=approval&session_id=${id}`)).json.items;
    expect(listed).toEqual([expect.objectContaining({ id: item.id, reason: "'desk' wants to call 'refund'." })]);
  });

  it("streamed, the run's pause shows as approval_required and the stream ends with the paused run", async () => {
    script({ desk: [callTool("refund", { order_id: "o-9", amount: 40 })] });
    const id = await session();
    const response = await streamed(id, "refund o-9");
    const frames = (await response.text()).split("\n\n").filter((b) => b.startsWith("id:") || b.startsWith("event:"));
    const names = frames.map((b) => /^event: (.+)$/m.exec(b)![1]);
    expect(names.slice(-3)).toEqual(["approval_required", "run_paused", "result"]);
    const approval = JSON.parse(/^data: (.+)$/m.exec(frames.at(-3)!)![1]!);
    expect(approval.data).toMatchObject({
      tool_name: "refund",
      arguments: { order_id: "o-9", amount: 40 },
      prompt: "Refund 40 on o-9 for desk?",
    });
    const result = JSON.parse(/^data: (.+)$/m.exec(frames.at(-1)!)![1]!);
    expect(result.run).toMatchObject({
      status: "awaiting_approval",
      pending: { approvals: [{ inbox_id: approval.data.inbox_id }] },
    });
  });

  it("deny: the model sees the denial and its reason as the call's output; the tool never runs", async () => {
    const refund = toolEndpoint("https://tools.test/refund");
    const fake = script({
      desk: [callTool("refund", { order_id: "o-9", amount: 4000 }), answer("A refund that large needs a manager.")],
    });
    const id = await session();
    const { item } = await pausedOnRefund(id);
    const denied = await call("POST", `/v1/inbox/${item.id}/resolve`, { decision: "deny", reason: "over the limit" });
    expect(denied.json.run).toMatchObject({ status: "completed", output: "A refund that large needs a manager." });
    expect(refund.deliveries).toHaveLength(0);
    expect(toolMessages(fake.requests[1]!)).toEqual(["Error: Not run: a person denied it: over the limit"]);
    expect(protocolErrors(fake.requests[1]!)).toEqual([]);
  });

  it("nobody deciding in time: the alarm denies, the expiry is recorded, and the run goes on", async () => {
    const fake = script({
      desk: [callTool("refund", { order_id: "o-9", amount: 40 }), answer("Nobody approved it; try later.")],
    });
    const id = await session();
    const { run, item } = await pausedOnRefund(id);
    const { stub } = sessionStub("alpha", id);
    await advanceClock(stub, 61_000);
    await drainDue(stub);
    const after = await eventually(
      async () => (await call("GET", `/v1/sessions/${id}/runs/${run.id}`)).json as any,
      (r) => r.status !== "running",
      { what: "the run past its approval's timeout" },
    );
    expect(after).toMatchObject({ status: "completed", output: "Nobody approved it; try later." });
    expect(toolMessages(fake.requests[1]!)).toEqual(["Error: Not run: nobody approved it within 60 s."]);
    expect((await call("GET", `/v1/inbox/${item.id}`)).json).toMatchObject({ status: "expired", decision: null });
    await flushOutbox(stub);
    expect((await d1Audit(id)).map((r) => r.action)).toContain("inbox.item_expired");
  });

  it("a paused run survives eviction: approved afterwards, it finishes", async () => {
    toolEndpoint("https://tools.test/refund", () => replyText("refunded"));
    script({ desk: [callTool("refund", { order_id: "o-9", amount: 40 }), answer("Done.")] });
    const id = await session();
    const { item } = await pausedOnRefund(id);
    const { stub } = sessionStub("alpha", id);
    await evictDurableObject(stub);
    const approved = await call("POST", `/v1/inbox/${item.id}/resolve`, { decision: "approve" });
    expect(approved.json.run).toMatchObject({ status: "completed", output: "Done." });
  });

  it("a gated tool beside a handoff pauses the run before the transfer; approved, the tool runs and then the handoff", async () => {
    const refund = toolEndpoint("https://tools.test/refund", () => replyText("refunded"));
    const fake = script({
      desk: [
        callTools(
          { name: "refund", arguments: { order_id: "o-9", amount: 40 } },
          { name: "transfer_to_billing", arguments: { reason: "invoice follow-up" } },
        ),
      ],
      billing: [answer("Billing here: refund done, invoice fixed.")],
    });
    const id = await session();
    const { item } = await pausedOnRefund(id);
    expect((await call("GET", `/v1/sessions/${id}`)).json.current_agent).toBe("desk");
    const approved = await call("POST", `/v1/inbox/${item.id}/resolve`, { decision: "approve" });
    expect(approved.json.run).toMatchObject({ status: "completed", output_agent: "billing" });
    expect(refund.deliveries).toHaveLength(1);
    expect((await call("GET", `/v1/sessions/${id}`)).json.current_agent).toBe("billing");
    // The target sees the tool's output with its call.
    expect(toolMessages(fake.requests[1]!)).toContain("refunded");
    expect(protocolErrors(fake.requests[1]!)).toEqual([]);
  });

  it("a handoff marked requires_approval waits for a person; denied, the model is told and the session stays", async () => {
    const fake = script({
      desk: [callTool("transfer_to_vault", { reason: "needs the vault" }), answer("The vault is closed to us.")],
    });
    const id = await session();
    const paused = await say(id, "open the vault");
    expect(paused.json.run).toMatchObject({ status: "awaiting_approval" });
    const item = (await call("GET", `/v1/sessions/${id}/inbox`)).json.items.find(
      (i: { kind: string }) => i.kind === "approval",
    );
    expect(item.details).toMatchObject({ tool_name: "transfer_to_vault" });
    const denied = await call("POST", `/v1/inbox/${item.id}/resolve`, { decision: "deny" });
    expect(denied.json.run).toMatchObject({ status: "completed", output: "The vault is closed to us." });
    expect(toolMessages(fake.requests[1]!)).toEqual(["Error: The handoff was not made: a person denied it."]);
    expect((await call("GET", `/v1/sessions/${id}`)).json.current_agent).toBe("desk");
  });

  it("a handoff marked requires_approval, approved, is carried out", async () => {
    script({ desk: [callTool("transfer_to_vault", { reason: "needs the vault" })], vault: [answer("Vault open.")] });
    const id = await session();
    await say(id, "open the vault");
    const item = (await call("GET", `/v1/sessions/${id}/inbox`)).json.items.find(
      (i: { kind: string }) => i.kind === "approval",
    );
    const approved = await call("POST", `/v1/inbox/${item.id}/resolve`, { decision: "approve" });
    expect(approved.json.run).toMatchObject({ status: "completed", output: "Vault open.", output_agent: "vault" });
    expect((await call("GET", `/v1/sessions/${id}`)).json.current_agent).toBe("vault");
  });
});
