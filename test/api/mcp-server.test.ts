import { env } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { answer, callTool as modelCalls } from "../fakes/openai";
import { llmServer } from "../fakes/server";
import { fakeWebhookAgent, replyText } from "../fakes/webhook-agent";
import { BETA_KEY, call } from "./helpers";
import { callTool, type Era, initialize, LEGACY, MODERN, other, post, request } from "./mcp-rpc";
import { script } from "./run-fixtures";

/**
 * Relay as an MCP server (docs/mcp-server.md) end to end: /mcp driven with JSON-RPC over fetch
 * in both revisions — 2026-07-28 (`server/discover`, the per-request envelope) and 2025-11-25
 * (`initialize`, served statelessly) — against real sessions, runs, inbox and D1; only the
 * model and the refund endpoint are faked at the fetch boundary.
 */

const AGENTS = [
  {
    name: "triage",
    description: "Greets customers and hands them to the right desk",
    handoffs: ["billing"],
  },
  {
    name: "billing",
    title: "Billing",
    description: "Invoices, refunds and payments",
    triggers: { keywords: ["refund", "invoice"], examples: ["I want a refund"], priority: 90 },
    capabilities: [{ name: "refunds" }],
    tools: { allow: ["refund"], confirmation: { require: ["refund"], timeout_s: 600 } },
  },
  {
    name: "secret-desk",
    description: "Internal refunds desk, not for MCP clients",
    triggers: { keywords: ["chargeback"], examples: ["chargeback dispute"], priority: 100 },
  },
  { name: "clerk", kind: "human", description: "A person at the desk", timeout_s: 3600 },
];

const eras: Era[] = ["modern", "legacy"];
const structured = (result: any) => result.structuredContent;

beforeAll(async () => {
  const tool = await call("PUT", "/v1/tools/refund", {
    name: "refund",
    kind: "http",
    description: "Refunds an order",
    url: "https://tools.test/refund",
    parameters: { type: "object", properties: { order_id: { type: "string" } } },
  });
  if (tool.status >= 300) throw new Error(JSON.stringify(tool.json));
  for (const agent of AGENTS) {
    const res = await call("PUT", `/v1/agents/${agent.name}`, agent);
    if (res.status >= 300) throw new Error(`PUT ${agent.name}: ${JSON.stringify(res.json)}`);
  }
  await call("PUT", "/v1/config/routing", {
    strategy: "rule",
    threshold: 50,
    llm: { provider: "openai", model: "fake-model" },
  });
});

afterEach(async () => {
  await call("DELETE", "/v1/config/mcp");
});

describe("the two revisions", () => {
  it("2026-07-28: server/discover names the revision and the capabilities; tools/list lists the six tools", async () => {
    const discover = await request("modern", "server/discover");
    expect(discover.status).toBe(200);
    expect(discover.response.result).toMatchObject({
      supportedVersions: [MODERN],
      capabilities: { tools: {}, resources: {} },
    });
    const tools = await request("modern", "tools/list");
    expect(tools.response.result.tools.map((t: { name: string }) => t.name).sort()).toEqual([
      "answer_inbox",
      "get_session",
      "list_agents",
      "route",
      "send_message",
      "start_session",
    ]);
    const route = tools.response.result.tools.find((t: { name: string }) => t.name === "route");
    expect(route.inputSchema).toMatchObject({ type: "object", required: ["input"] });
  });

  it("2025-11-25: initialize answers with the revision and the server's name; a call needs no session", async () => {
    const init = await initialize();
    expect(init.status).toBe(200);
    expect(init.response.result).toMatchObject({
      protocolVersion: LEGACY,
      serverInfo: { name: "relay" },
      capabilities: { tools: {}, resources: {} },
    });
    const { result } = await callTool("legacy", "list_agents", {});
    expect(structured(result).agents.map((a: { name: string }) => a.name)).toEqual([
      "billing",
      "clerk",
      "secret-desk",
      "triage",
    ]);
  });

  it("GET and DELETE are 405: a stateless server has no stream and no session", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await other(method);
      expect(res.status).toBe(405);
      expect(res.json.error).toMatchObject({ message: expect.stringContaining("Method not allowed") });
    }
  });
});

describe("auth", () => {
  it("no key or a wrong key is the usual JSON 401, and nothing is written", async () => {
    const before = (await call("GET", "/v1/sessions")).json.items.length;
    for (const key of [null, "not-a-key"]) {
      const res = await post(
        {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "start_session", arguments: { agent: "billing" } },
        },
        { key, headers: { "MCP-Protocol-Version": LEGACY } },
      );
      expect(res.status).toBe(401);
      expect(res.json.error.code).toBe("UNAUTHORIZED");
      const get = await other("GET", key);
      expect(get.status).toBe(401);
    }
    const counts = await env.DB.prepare("SELECT COUNT(*) AS n FROM mcp_config").first<{ n: number }>();
    expect(counts?.n).toBe(0);
    expect((await call("GET", "/v1/sessions")).json.items.length).toBe(before);
  });

  it("another tenant's key sees its own team (none here)", async () => {
    const res = await request("modern", "tools/call", { name: "list_agents", arguments: {} }, { key: BETA_KEY });
    expect(res.response.result.structuredContent).toEqual({ agents: [], next_cursor: null });
  });
});

describe.each(eras)("tools (%s)", (era) => {
  it("route: which agent and why, changing nothing", async () => {
    const { result } = await callTool(era, "route", { input: "I want a refund for order 7" });
    expect(result.isError).toBeUndefined();
    expect(structured(result)).toMatchObject({
      agent: "billing",
      method: "rule",
      matched_keywords: expect.arrayContaining(["refund"]),
    });
    expect(JSON.parse(result.content[0].text)).toEqual(structured(result));
  });

  it("list_agents pages in name order", async () => {
    const first = structured((await callTool(era, "list_agents", { limit: 2 })).result);
    expect(first.agents.map((a: { name: string }) => a.name)).toEqual(["billing", "clerk"]);
    expect(first.agents[0]).toMatchObject({
      title: "Billing",
      capabilities: ["refunds"],
      kind: "llm",
      uri: "relay://agents/billing",
    });
    const second = structured((await callTool(era, "list_agents", { limit: 2, cursor: first.next_cursor })).result);
    expect(second).toEqual({
      agents: [
        expect.objectContaining({ name: "secret-desk" }),
        expect.objectContaining({ name: "triage", handoffs: ["billing"] }),
      ],
      next_cursor: null,
    });
  });

  it("start_session with an agent, then get_session shows it and no run yet", async () => {
    const started = structured(
      (await callTool(era, "start_session", { agent: "billing", metadata: { ticket: 9 } })).result,
    );
    expect(started.session).toMatchObject({ current_agent: "billing", metadata: { ticket: 9, channel: "mcp" } });
    const got = structured((await callTool(era, "get_session", { session_id: started.session.id })).result);
    expect(got).toMatchObject({ session: { id: started.session.id, current_agent: "billing" }, latest_run: null });
  });

  it("start_session routes an input and stores it as the first message", async () => {
    const started = structured((await callTool(era, "start_session", { input: "please send my invoice" })).result);
    expect(started).toMatchObject({
      session: { current_agent: "billing", history_length: 1 },
      route: { agent: "billing" },
    });
  });

  it("send_message: the run's answer, who gave it and the handoffs taken", async () => {
    script({
      triage: [modelCalls("transfer_to_billing", { reason: "billing question" })],
      billing: [answer("Your invoice is on its way.")],
    });
    const { result } = await callTool(era, "send_message", { agent: "triage", content: "where is my invoice?" });
    expect(result.isError).toBeUndefined();
    expect(structured(result)).toMatchObject({
      status: "completed",
      answered_by: "billing",
      output: "Your invoice is on its way.",
      handoffs: [{ from: "triage", to: "billing", reason: "billing question" }],
      waiting_for: null,
      session_created: true,
    });
    const session = structured(
      (await callTool(era, "get_session", { session_id: structured(result).session_id })).result,
    );
    expect(session).toMatchObject({ session: { current_agent: "billing" }, latest_run: { status: "completed" } });
  });

  it("send_message pauses on an approval; answer_inbox approves it and the run finishes", async () => {
    const refund = fakeWebhookAgent({ url: "https://tools.test/refund", respond: () => replyText("refunded") });
    llmServer.use(refund.handler);
    script({ billing: [modelCalls("refund", { order_id: "o-7" }), answer("Refunded o-7.")] });
    const sent = structured((await callTool(era, "send_message", { content: "I want a refund for o-7" })).result);
    expect(sent).toMatchObject({
      status: "awaiting_approval",
      agent: "billing",
      waiting_for: {
        kind: "approval",
        agent: "billing",
        approvals: [{ tool: "refund", arguments: '{"order_id":"o-7"}' }],
      },
    });
    expect(refund.deliveries).toHaveLength(0);
    const inboxId = sent.waiting_for.approvals[0].inbox_id;
    const mismatch = await callTool(era, "answer_inbox", { inbox_id: inboxId, reply: "sure" });
    expect(mismatch.result.isError).toBe(true);
    expect(structured(mismatch.result).error.code).toBe("INBOX_ANSWER_MISMATCH");
    const approved = structured(
      (await callTool(era, "answer_inbox", { inbox_id: inboxId, decision: "approve" })).result,
    );
    expect(approved).toMatchObject({
      item: { id: inboxId, status: "resolved", decision: "approve", resolved_by: "mcp" },
      run: { status: "completed", answered_by: "billing", output: "Refunded o-7." },
    });
    expect(refund.deliveries).toHaveLength(1);
  });

  it("answer_inbox replies to a person's turn", async () => {
    const sent = structured(
      (await callTool(era, "send_message", { agent: "clerk", content: "a person please" })).result,
    );
    expect(sent).toMatchObject({ status: "awaiting_human", waiting_for: { kind: "human", agent: "clerk" } });
    const answered = structured(
      (await callTool(era, "answer_inbox", { inbox_id: sent.waiting_for.inbox_id, reply: "Here to help.", by: "ops" }))
        .result,
    );
    expect(answered).toMatchObject({
      item: { status: "resolved", reply: "Here to help.", resolved_by: "ops" },
      run: { status: "completed", output: "Here to help.", answered_by: "clerk" },
    });
  });
});
