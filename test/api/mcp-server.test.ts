import { env } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { sendMessage } from "../../src/interop/mcp-server/send-message";
import { eventually } from "../eventually";
import { answer, delayed, callTool as modelCalls } from "../fakes/openai";
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

describe.each(eras)("progress (%s)", (era) => {
  it("send_message with a progressToken streams progress notifications, then the answer", async () => {
    script({ triage: [modelCalls("transfer_to_billing", { reason: "money" })], billing: [answer("Done.")] });
    const res = await request(
      era,
      "tools/call",
      { name: "send_message", arguments: { agent: "triage", content: "my invoice" } },
      { meta: { progressToken: `p-${era}` } },
    );
    expect(res.contentType).toMatch(/^text\/event-stream/);
    const progress = res.messages.filter((m) => m.method === "notifications/progress");
    expect(progress.length).toBeGreaterThan(2);
    expect(progress.every((m) => m.params.progressToken === `p-${era}`)).toBe(true);
    expect(progress.map((m) => m.params.progress)).toEqual(progress.map((_, i) => i + 1));
    expect(progress.map((m) => m.params.message)).toContain("handed off from triage to billing");
    expect(res.response.result.structuredContent).toMatchObject({ status: "completed", output: "Done." });
  });

  it("without a progressToken no progress is sent (2026-07-28 answers one JSON body; the 2025 fallback always streams)", async () => {
    const res = await request(era, "tools/call", {
      name: "send_message",
      arguments: { agent: "clerk", content: "hi" },
    });
    expect(res.contentType).toMatch(era === "modern" ? /^application\/json/ : /^text\/event-stream/);
    expect(res.messages).toHaveLength(1);
    expect(res.response.result.structuredContent.status).toBe("awaiting_human");
  });
});

describe.each(eras)("resources (%s)", (era) => {
  it("lists both templates, and the agents", async () => {
    const templates = await request(era, "resources/templates/list");
    expect(
      templates.response.result.resourceTemplates.map((t: { uriTemplate: string }) => t.uriTemplate).sort(),
    ).toEqual(["relay://agents/{name}", "relay://sessions/{id}/transcript"]);
    const list = await request(era, "resources/list");
    const uris = list.response.result.resources.map((r: { uri: string }) => r.uri);
    expect(uris).toEqual(expect.arrayContaining(AGENTS.map((a) => `relay://agents/${a.name}`)));
  });

  it("reads an agent's definition", async () => {
    const read = await request(era, "resources/read", { uri: "relay://agents/billing" });
    const [content] = read.response.result.contents;
    expect(content).toMatchObject({ uri: "relay://agents/billing", mimeType: "application/json" });
    expect(JSON.parse(content.text)).toMatchObject({ name: "billing", tools: { allow: ["refund"] } });
  });

  it("reads a session's transcript, oldest first", async () => {
    const sent = structured((await callTool(era, "send_message", { agent: "clerk", content: "transcript me" })).result);
    await callTool(era, "answer_inbox", { inbox_id: sent.waiting_for.inbox_id, reply: "Noted." });
    const uri = `relay://sessions/${sent.session_id}/transcript`;
    const read = await request(era, "resources/read", { uri });
    const body = JSON.parse(read.response.result.contents[0].text);
    expect(body.session_id).toBe(sent.session_id);
    expect(body.items.map((i: { role: string; content: string }) => [i.role, i.content])).toEqual([
      ["user", "transcript me"],
      ["assistant", "Noted."],
    ]);
  });

  it("an unknown agent or session is the SDK's resource-not-found, Relay's code in the message", async () => {
    for (const uri of ["relay://agents/nobody", "relay://sessions/ses_nothing/transcript"]) {
      const read = await request(era, "resources/read", { uri });
      expect(read.response.error).toMatchObject({ code: -32602 });
      expect(read.response.error.message).toMatch(/(AGENT|SESSION)_NOT_FOUND/);
    }
  });
});

describe("mcp.expose", () => {
  it("GET, PUT and DELETE /v1/config/mcp; a bad name is VALIDATION_FAILED and nothing changes", async () => {
    expect((await call("GET", "/v1/config/mcp")).json).toEqual({ expose: null, updated_at: null });
    const put = await call("PUT", "/v1/config/mcp", { expose: ["clerk", "billing", "billing"] });
    expect(put.status).toBe(200);
    expect(put.json).toEqual({ expose: ["billing", "clerk"], updated_at: expect.any(String) });
    const bad = await call("PUT", "/v1/config/mcp", { expose: ["Not A Slug"] });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe("VALIDATION_FAILED");
    expect((await call("GET", "/v1/config/mcp")).json.expose).toEqual(["billing", "clerk"]);
    expect((await call("GET", "/v1/config/mcp", undefined, { key: BETA_KEY })).json.expose).toBeNull();
    expect((await call("DELETE", "/v1/config/mcp")).json).toEqual({ expose: null, updated_at: null });
  });

  describe.each(eras)("with billing and clerk exposed (%s)", (era) => {
    beforeAll(async () => {
      await call("PUT", "/v1/config/mcp", { expose: ["billing", "clerk"] });
    });
    // The file's afterEach clears the settings: each test sets them again.
    const expose = () => call("PUT", "/v1/config/mcp", { expose: ["billing", "clerk"] });

    it("unexposed agents are not listed, as tools or resources, and do not read", async () => {
      await expose();
      const agents = structured((await callTool(era, "list_agents", {})).result).agents;
      expect(agents.map((a: { name: string }) => a.name)).toEqual(["billing", "clerk"]);
      const list = await request(era, "resources/list");
      const uris = list.response.result.resources.map((r: { uri: string }) => r.uri);
      expect(uris).not.toContain("relay://agents/triage");
      expect(uris).toContain("relay://agents/billing");
      const read = await request(era, "resources/read", { uri: "relay://agents/secret-desk" });
      expect(read.response.error.message).toMatch(/AGENT_NOT_FOUND/);
    });

    it("route never answers with an unexposed agent, nor names it", async () => {
      await expose();
      const plain = await call("POST", "/v1/route", { input: "chargeback dispute on my card" });
      expect(plain.json.agent).toBe("secret-desk");
      const { result } = await callTool(era, "route", { input: "chargeback dispute on my card" });
      expect(structured(result)).toMatchObject({
        agent: null,
        method: "fallback",
        fallback: { strategy: "prompt_user", agents: [{ name: "billing" }, { name: "clerk" }] },
      });
      expect(JSON.stringify(result)).not.toContain("secret-desk");
      const billing = structured((await callTool(era, "route", { input: "I want a refund" })).result);
      expect(billing.agent).toBe("billing");
    });

    it("start_session and send_message to an unexposed agent are refused, nothing made", async () => {
      await expose();
      const before = await env.DB.prepare("SELECT COUNT(*) AS n FROM audit_log").first<{ n: number }>();
      for (const [tool, args] of [
        ["start_session", { agent: "triage" }],
        ["send_message", { agent: "secret-desk", content: "hello" }],
        ["start_session", { input: "chargeback dispute" }],
      ] as const) {
        const { result } = await callTool(era, tool, args);
        expect(result.isError).toBe(true);
        const code = structured(result).error.code;
        expect(["AGENT_UNAVAILABLE", "NO_ROUTE"]).toContain(code);
        if (code === "AGENT_UNAVAILABLE")
          expect(structured(result).error.details).toMatchObject({ reason: "not_exposed" });
        expect(result.content[0].text).toMatch(new RegExp(`^${code}: `));
      }
      expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM audit_log").first<{ n: number }>()).toEqual(before);
    });

    it("send_message to a session whose current agent is unexposed is refused", async () => {
      const created = await call("POST", "/v1/sessions", { agent: "triage" });
      await expose();
      const { result } = await callTool(era, "send_message", { session_id: created.json.id, content: "hi" });
      expect(structured(result).error).toMatchObject({ code: "AGENT_UNAVAILABLE", details: { agent: "triage" } });
    });
  });
});

describe.each(eras)("bad input (%s)", (era) => {
  it("arguments that do not fit are VALIDATION_FAILED with issues, as a tool error", async () => {
    for (const [tool, args, path] of [
      ["route", { input: 5 }, "input"],
      ["route", {}, "input"],
      ["send_message", { content: "" }, "content"],
      ["start_session", { agent: "Not A Slug" }, "agent"],
      ["answer_inbox", { inbox_id: "inb_x", decision: "maybe" }, "decision"],
      ["answer_inbox", { inbox_id: "inb_x" }, "reply"],
      ["list_agents", { limit: 0 }, "limit"],
      ["get_session", { session_id: "s", extra: 1 }, "(root)"],
    ] as const) {
      const { result } = await callTool(era, tool, args);
      expect(result.isError, `${tool} ${JSON.stringify(args)}`).toBe(true);
      expect(structured(result).error).toMatchObject({
        code: "VALIDATION_FAILED",
        details: { issues: expect.arrayContaining([expect.objectContaining({ path })]) },
      });
    }
  });

  it("Relay's refusals are tool errors with their codes", async () => {
    const cases = [
      ["get_session", { session_id: "ses_nothing" }, "SESSION_NOT_FOUND"],
      ["answer_inbox", { inbox_id: "inb_nothing", reply: "x" }, "INBOX_ITEM_NOT_FOUND"],
      ["start_session", { agent: "nobody" }, "AGENT_NOT_FOUND"],
      ["start_session", {}, "VALIDATION_FAILED"],
      ["send_message", { session_id: "ses_nothing", agent: "billing", content: "x" }, "VALIDATION_FAILED"],
      ["send_message", { session_id: "ses_nothing", content: "x" }, "SESSION_NOT_FOUND"],
      ["route", { input: "x".repeat(40_000) }, "PAYLOAD_TOO_LARGE"],
    ] as const;
    for (const [tool, args, code] of cases) {
      const { result, answer: res } = await callTool(era, tool, args);
      expect(res.status).toBe(200);
      expect(result.isError, tool).toBe(true);
      expect(structured(result).error.code).toBe(code);
    }
  });

  it("an unknown tool and malformed JSON-RPC are the SDK's protocol errors, never a 500", async () => {
    const unknown = await request(era, "tools/call", { name: "drop_tables", arguments: {} });
    expect(unknown.response.error).toMatchObject({ code: -32602 });
    for (const body of ["{not json", "[]", JSON.stringify({ jsonrpc: "1.0", id: 1, method: "ping" })]) {
      const res = await post(body, { headers: era === "modern" ? { "MCP-Protocol-Version": MODERN } : {} });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.json.error.code).toBeLessThan(0);
    }
  });
});

describe("a run longer than send_message waits", () => {
  it("is answered running, and goes on without the caller", async () => {
    script({ billing: [delayed(1500, answer("Took a while."))] });
    const ctx = {
      env,
      tenant: "alpha",
      exposure: null,
      background: (work: Promise<unknown>) => void work.catch(() => {}),
    };
    const events: string[] = [];
    // The same function the tool calls, with a wait short enough for a test (the tool's is SEND_WAIT_MS).
    const sent = await sendMessage(
      ctx,
      { agent: "billing", content: "slow invoice question" },
      (e) => {
        events.push(e.type);
      },
      300,
    );
    expect(sent.run.status).toBe("running");
    expect(events).toContain("run_started");
    const done = await eventually(
      async () => structured((await callTool("modern", "get_session", { session_id: sent.session_id })).result),
      (s) => s.latest_run?.status === "completed",
      { what: "the run completed after its caller stopped waiting" },
    );
    expect(done.latest_run).toMatchObject({ output: "Took a while.", answered_by: "billing", still_running: false });
  });
});
