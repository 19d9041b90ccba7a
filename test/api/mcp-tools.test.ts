import { beforeAll, describe, expect, it } from "vitest";
import { fakeMcpServer } from "../fakes/mcp-server";
import { answer, callTool, type RecordedRequest } from "../fakes/openai";
import { llmServer } from "../fakes/server";
import { call, newSession, putAgents, say } from "./helpers";
import { protocolErrors, script, toolNames } from "./run-fixtures";

/**
 * MCP tool servers (docs/mcp.md): a registry tool of kind `mcp` names a Streamable HTTP
 * server; an agent whose tools.allow names the server is offered its tools as
 * `<server>__<tool>`, and a call goes through the run's approval path to the server. The
 * server is the official SDK's (2026-07-28 unless a test says otherwise), behind msw; the model
 * is faked; sessions and D1 are real.
 */

const AGENTS = [
  {
    name: "clerk",
    description: "Orders",
    tools: { allow: ["orders"], confirmation: { require: ["orders__lookup_order"] } },
  },
  { name: "one", description: "One tool only", tools: { allow: ["orders__echo"] } },
  { name: "broken", description: "Its server fails", tools: { allow: ["down"] } },
];

beforeAll(async () => {
  const tools = [
    { name: "orders", kind: "mcp", url: "https://mcp.test/orders", description: "Order tools", timeout_s: 5 },
    { name: "down", kind: "mcp", url: "https://mcp.test/down" },
  ];
  for (const tool of tools) {
    const res = await call("PUT", `/v1/tools/${tool.name}`, tool);
    if (res.status !== 201) throw new Error(`PUT tool ${tool.name}: ${JSON.stringify(res.json)}`);
  }
  await putAgents(AGENTS);
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
});

const toolMessages = (req: RecordedRequest) =>
  req.body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));

describe("mcp tools in the registry", () => {
  it("refuses an mcp tool without a url, with signing, or headers that are not secret names or are the protocol's", async () => {
    const cases: [string, unknown][] = [
      ["m1", { name: "m1", kind: "mcp" }],
      ["m2", { name: "m2", kind: "mcp", url: "https://mcp.test/x", signing: "none" }],
      ["m3", { name: "m3", kind: "mcp", url: "https://mcp.test/x", headers: { Authorization: "not a name" } }],
      ["m4", { name: "m4", kind: "mcp", url: "https://mcp.test/x", headers: { "Mcp-Session-Id": "A" } }],
      ["m5", { name: "m5", kind: "client", headers: { Authorization: "A" } }],
      // 2026-07-28's own headers: the method, the tool's name and mirrored parameters.
      ["m7", { name: "m7", kind: "mcp", url: "https://mcp.test/x", headers: { "Mcp-Method": "A" } }],
      ["m8", { name: "m8", kind: "mcp", url: "https://mcp.test/x", headers: { "Mcp-Param-Region": "A" } }],
    ];
    for (const [name, body] of cases) {
      const res = await call("PUT", `/v1/tools/${name}`, body);
      expect(res.status, name).toBe(400);
      expect(res.json.error.code, name).toBe("VALIDATION_FAILED");
    }
    // A well-formed name the tenant's vault lacks is refused too, naming it.
    const unknown = await call("PUT", "/v1/tools/m6", {
      name: "m6",
      kind: "mcp",
      url: "https://mcp.test/x",
      headers: { Authorization: "never-stored" },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error).toMatchObject({
      code: "UNKNOWN_SECRET",
      details: { secrets: [{ name: "never-stored" }] },
    });
  });

  it("refresh lists the server's tools under the names agents allow and models call", async () => {
    llmServer.use(fakeMcpServer("https://mcp.test/orders").handler);
    const res = await call("POST", "/v1/tools/orders/refresh");
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      tool: "orders",
      tools: [
        { name: "orders__lookup_order", mcp_name: "lookup_order", description: "Looks an order up by id" },
        { name: "orders__echo", mcp_name: "echo", description: "Echoes" },
      ],
    });
    const http = await call("PUT", "/v1/tools/plain", { name: "plain", kind: "client" });
    expect(http.status).toBe(201);
    expect((await call("POST", "/v1/tools/plain/refresh")).json.error.code).toBe("VALIDATION_FAILED");
    expect((await call("POST", "/v1/tools/nothing/refresh")).json.error.code).toBe("TOOL_NOT_FOUND");
  });

  it("refresh lists a 2025-11-25 server's tools the same way", async () => {
    const server = fakeMcpServer("https://mcp.test/legacy", { revision: "2025-11-25" });
    llmServer.use(server.handler);
    const put = await call("PUT", "/v1/tools/legacy", { name: "legacy", kind: "mcp", url: "https://mcp.test/legacy" });
    expect(put.status).toBe(201);
    const res = await call("POST", "/v1/tools/legacy/refresh");
    expect(res.status).toBe(200);
    expect(res.json.tools.map((t: { name: string }) => t.name)).toEqual(["legacy__lookup_order", "legacy__echo"]);
    expect(server.methods).toContain("initialize");
  });

  it("a server answering tools/list with a JSON-RPC error: refresh is 502 MCP_ERROR", async () => {
    llmServer.use(fakeMcpServer("https://mcp.test/down", { failList: true }).handler);
    const res = await call("POST", "/v1/tools/down/refresh");
    expect(res.status).toBe(502);
    expect(res.json.error).toMatchObject({ code: "MCP_ERROR", details: { tool: "down" } });
    expect(res.json.error.message).toContain("the tool index is down");
  });
});

describe("mcp tools in a run", () => {
  it("offers the server's tools; a gated call waits for approval, then runs on the server and its output reaches the model", async () => {
    const server = fakeMcpServer("https://mcp.test/orders");
    llmServer.use(server.handler);
    const fake = script({
      clerk: [callTool("orders__lookup_order", { order_id: "o-7" }), answer("o-7 has shipped.")],
    });
    const id = await newSession("clerk");
    const paused = await say(id, "where is o-7?");
    expect(paused.json.run).toMatchObject({ status: "awaiting_approval", pending: { kind: "approval" } });
    expect(toolNames(fake.requests[0]!)).toEqual(["escalate_to_human", "orders__echo", "orders__lookup_order"]);
    expect(server.calls).toEqual([]);
    const items = (await call("GET", `/v1/sessions/${id}/inbox`)).json.items;
    const item = items.find((i: { kind: string }) => i.kind === "approval");
    expect(item.details).toMatchObject({ tool_name: "orders__lookup_order", arguments: { order_id: "o-7" } });
    const approved = await call("POST", `/v1/inbox/${item.id}/resolve`, { decision: "approve" });
    expect(approved.json.run).toMatchObject({ status: "completed", output: "o-7 has shipped." });
    expect(server.calls).toEqual([expect.objectContaining({ tool: "lookup_order", arguments: { order_id: "o-7" } })]);
    // The fake speaks 2026-07-28: no handshake, no session (test/outbound/mcp-tool.test.ts has both revisions).
    expect(server.methods).not.toContain("initialize");
    expect(server.requests.filter((r) => r.headers["mcp-session-id"])).toEqual([]);
    expect(toolMessages(fake.requests[1]!)).toEqual(["order o-7: shipped"]);
    expect(protocolErrors(fake.requests[1]!)).toEqual([]);
    const toolEvents = approved.json.run.events.filter((e: { event_type: string }) => e.event_type === "tool_call");
    expect(toolEvents.map((e: { details: { outcome: string } }) => e.details.outcome)).toEqual([
      "approval required",
      "approved by api",
      "ok",
    ]);
  });

  it("an agent that allows one of the server's tools is offered that one alone", async () => {
    llmServer.use(fakeMcpServer("https://mcp.test/orders").handler);
    const fake = script({ one: [callTool("orders__echo", { text: "hi" }), answer("done")] });
    const id = await newSession("one");
    const res = await say(id, "echo hi");
    expect(res.json.run).toMatchObject({ status: "completed" });
    expect(toolNames(fake.requests[0]!)).toEqual(["escalate_to_human", "orders__echo"]);
    expect(toolMessages(fake.requests[1]!)).toEqual(["hi"]);
  });

  it("a tools/call answered with a JSON-RPC error is an error output the model sees; the run goes on", async () => {
    llmServer.use(fakeMcpServer("https://mcp.test/orders", { failCall: true }).handler);
    const fake = script({ one: [callTool("orders__echo", { text: "hi" }), answer("The tool is down, sorry.")] });
    const id = await newSession("one");
    const res = await say(id, "echo hi");
    expect(res.json.run).toMatchObject({ status: "completed", output: "The tool is down, sorry." });
    expect(toolMessages(fake.requests[1]!)).toEqual([
      "Error: 'orders__echo' failed: MCP error -32000: the order system is down",
    ]);
    const event = res.json.run.events.find((e: { event_type: string }) => e.event_type === "tool_call");
    expect(event).toMatchObject({ details: { tool_name: "orders__echo", outcome: "error" } });
  });

  it("a server whose tools/list is a JSON-RPC error fails the run with MCP_ERROR; the next message runs again", async () => {
    llmServer.use(fakeMcpServer("https://mcp.test/down", { failList: true }).handler);
    const id = await newSession("broken");
    const res = await say(id, "hello");
    expect(res.status).toBe(200);
    expect(res.json.run).toMatchObject({ status: "failed", error: { code: "MCP_ERROR" } });
    expect(res.json.run.error.message).toContain("the tool index is down");
    llmServer.use(fakeMcpServer("https://mcp.test/down").handler);
    script({ broken: [answer("back")] });
    expect((await say(id, "again")).json.run).toMatchObject({ status: "completed", output: "back" });
  });
});
