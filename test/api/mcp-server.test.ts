import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { sendMessage } from "../../src/api/mcp-server/send-message";
import { LiveEvent } from "../../src/schemas/live";
import { eventually } from "../eventually";
import { answer, delayed, callTool as modelCalls } from "../fakes/openai";
import { llmServer } from "../fakes/server";
import { fakeWebhookAgent, replyText } from "../fakes/webhook-agent";
import { newSession } from "./helpers";
import { AGENTS, setUpTeam } from "./mcp-fixtures";
import { callTool, type Era, initialize, LEGACY, MODERN, other, request } from "./mcp-rpc";
import { answerAfterUnreadableEvents, script } from "./run-fixtures";

/**
 * Relay as an MCP server (docs/mcp-server.md) end to end: /mcp driven with JSON-RPC over fetch
 * in both revisions — 2026-07-28 (`server/discover`, the per-request envelope) and 2025-11-25
 * (`initialize`, served statelessly) — against real sessions, runs, inbox and D1; only the
 * model and the refund endpoint are faked at the fetch boundary.
 */

const eras: Era[] = ["modern", "legacy"];
const structured = (result: any) => result.structuredContent;

beforeAll(setUpTeam);

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

/** What the send_message tool hands sendMessage, for the tests that call it directly. */
const directCtx = {
  env,
  tenant: "alpha",
  exposure: null,
  background: (work: Promise<unknown>) => void work.catch(() => {}),
};

describe("a run longer than send_message waits", () => {
  it("is answered running, and goes on without the caller", async () => {
    script({ billing: [delayed(1500, answer("Took a while."))] });
    const events: string[] = [];
    // The same function the tool calls, with a wait short enough for a test (the tool's is SEND_WAIT_MS).
    const sent = await sendMessage(
      directCtx,
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

describe("send_message reading the run's stream", () => {
  it("skips a stored event it cannot read: every event it passes on is a LiveEvent, and the answer is the run's", async () => {
    const sessionId = await newSession("billing");
    const fake = answerAfterUnreadableEvents(sessionId, answer("Refunded in full."));
    const events: unknown[] = [];
    const sent = await sendMessage(directCtx, { session_id: sessionId, content: "refund please" }, (e) => {
      events.push(e);
    });
    expect(fake.requests).toHaveLength(1);
    expect(sent.run).toMatchObject({ status: "completed", output: "Refunded in full." });
    expect(events.filter((e) => !LiveEvent.safeParse(e).success)).toEqual([]);
    expect(events.filter((e) => (e as LiveEvent).type === "run_completed")).toHaveLength(1);
  });
});
