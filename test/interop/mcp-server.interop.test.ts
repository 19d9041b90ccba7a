import { execFile, spawnSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import { promisify } from "node:util";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeModel, loopback, PORTS, putAgents, type Relay, startRelay } from "./harness";

/**
 * Relay as an MCP server (docs/mcp-server.md) against the official MCP clients, over real HTTP
 * on loopback: Relay under `wrangler dev` with a scripted model; the 2.x client negotiating
 * (`server/discover`, revision 2026-07-28) and the 1.x SDK's client speaking 2025-11-25. Each
 * routes a billing question, gets billing's answer — paused on the approval its refund tool
 * needs — answers the approval through answer_inbox, and reads the transcript resource.
 */

let relay: Relay;
const model = new FakeModel();
/** The refund tool's endpoint (the harness's `remote` port: no remote agent runs in this file). */
let refunds: Server;
const refunded: string[] = [];

const BILLING = {
  name: "billing",
  title: "Billing",
  description: "Invoices, refunds and charges.",
  triggers: { keywords: ["refund", "invoice", "charged"], examples: ["I want a refund"], priority: 95 },
  tools: { allow: ["refund"], confirmation: { require: ["refund"], timeout_s: 600 } },
};

beforeAll(async () => {
  await model.start(PORTS.model);
  refunds = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      refunded.push(body);
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("refunded");
    });
  });
  await new Promise<void>((resolve) => refunds.listen(PORTS.remote, "127.0.0.1", resolve));
  relay = await startRelay();
  const tool = await relay.api("PUT", "/v1/tools/refund", {
    name: "refund",
    kind: "http",
    description: "Refunds an order",
    url: `${loopback(PORTS.remote)}/refund`,
    parameters: { type: "object", properties: { order_id: { type: "string" } } },
  });
  if (tool.status >= 300) throw new Error(`PUT tool: ${JSON.stringify(tool.json)}`);
  await putAgents(relay, [BILLING]);
  const routing = await relay.api("PUT", "/v1/config/routing", {
    strategy: "rule",
    threshold: 50,
    llm: { provider: "openai", model: "fake" },
  });
  if (routing.status !== 200) throw new Error(`routing: ${JSON.stringify(routing.json)}`);
}, 180_000);

afterAll(async () => {
  await relay?.stop();
  model.stop();
  await new Promise((resolve) => refunds?.close(resolve));
});

const text = (result: any) => JSON.parse(result.content[0].text);

/** What each client does, the same way: route, send, approve, read. */
interface McpCalls {
  callTool(name: string, args: Record<string, unknown>, onprogress?: (p: { message?: string }) => void): Promise<any>;
  readResource(uri: string): Promise<any>;
}

async function billingConversation(client: McpCalls, order: string): Promise<void> {
  const question = `I was charged twice, please refund order ${order}`;
  const routed = await client.callTool("route", { input: question });
  expect(routed.isError).toBeFalsy();
  expect(routed.structuredContent).toMatchObject({ agent: "billing", method: "rule" });

  model.script(
    "billing",
    { calls: [{ name: "refund", arguments: { order_id: order } }] },
    {
      content: `Refunded ${order}.`,
    },
  );
  const progress: string[] = [];
  const sent = await client.callTool("send_message", { content: question }, (p) => progress.push(p.message ?? ""));
  expect(sent.structuredContent).toMatchObject({
    status: "awaiting_approval",
    agent: "billing",
    waiting_for: { kind: "approval", approvals: [{ tool: "refund" }] },
  });
  expect(progress).toContain("billing is working");
  expect(refunded.filter((body) => body.includes(order))).toHaveLength(0);

  const inboxId = sent.structuredContent.waiting_for.approvals[0].inbox_id;
  const approved = await client.callTool("answer_inbox", { inbox_id: inboxId, decision: "approve" });
  expect(approved.structuredContent).toMatchObject({
    item: { status: "resolved", decision: "approve" },
    run: { status: "completed", answered_by: "billing", output: `Refunded ${order}.` },
  });
  expect(refunded.filter((body) => body.includes(order))).toHaveLength(1);

  const uri = `relay://sessions/${sent.structuredContent.session_id}/transcript`;
  const read = await client.readResource(uri);
  const transcript = JSON.parse(read.contents[0].text);
  expect(transcript.items[0]).toMatchObject({ role: "user", content: question });
  expect(transcript.items.at(-1)).toMatchObject({ role: "assistant", agent: "billing", content: `Refunded ${order}.` });
}

const authed = () => ({ headers: { Authorization: `Bearer ${relay.key}` } });

describe("the 2.x client, negotiating", () => {
  it("speaks 2026-07-28 and carries a billing conversation through its approval", async () => {
    const client = new Client({ name: "interop-2x", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${relay.url}/mcp`), { requestInit: authed() }));
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      expect(client.getServerVersion()).toMatchObject({ name: "relay" });
      const tools = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(tools).toEqual(["answer_inbox", "get_session", "list_agents", "route", "send_message", "start_session"]);
      const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
      expect(templates).toContain("relay://sessions/{id}/transcript");
      await billingConversation(
        {
          callTool: (name, args, onprogress) =>
            client.callTool({ name, arguments: args }, onprogress ? { onprogress } : undefined),
          readResource: (uri) => client.readResource({ uri }),
        },
        "o-2026",
      );
    } finally {
      await client.close();
    }
  });
});

describe("the 1.x SDK's client", () => {
  it("speaks 2025-11-25 and carries the same conversation", async () => {
    const client = new LegacyClient({ name: "interop-1x", version: "1.0.0" });
    const transport = new LegacyTransport(new URL(`${relay.url}/mcp`), { requestInit: authed() });
    await client.connect(transport);
    try {
      expect(transport.protocolVersion).toBe("2025-11-25");
      const agents = await client.callTool({ name: "list_agents", arguments: {} });
      expect(text(agents).agents.map((a: { name: string }) => a.name)).toContain("billing");
      await billingConversation(
        {
          callTool: (name, args, onprogress) =>
            client.callTool({ name, arguments: args }, undefined, onprogress ? { onprogress } : undefined),
          readResource: (uri) => client.readResource({ uri }),
        },
        "o-2025",
      );
    } finally {
      await client.close();
    }
  });

  it("without the key, connecting fails with Relay's 401", async () => {
    const client = new LegacyClient({ name: "interop-1x", version: "1.0.0" });
    await expect(client.connect(new LegacyTransport(new URL(`${relay.url}/mcp`)))).rejects.toThrow(/401|UNAUTHORIZED/);
  });
});

/**
 * The MCP Inspector 2.12 (`@modelcontextprotocol/inspector --cli`; the separate `inspector-cli`
 * package cannot load its own package.json when run alone) is run from the npm cache only,
 * so the suite stays offline: the case is skipped when the cache lacks it (running
 * `npx -y @modelcontextprotocol/inspector@2.12.0 --help` once, online, fills it).
 */
const INSPECTOR = ["--offline", "-y", "@modelcontextprotocol/inspector@2.12.0"];
const inspectorCached = spawnSync("npx", [...INSPECTOR, "--help"], { timeout: 60_000 }).status === 0;

describe("the MCP Inspector's CLI", () => {
  it.skipIf(!inspectorCached)(
    "lists the tools and calls route over Streamable HTTP",
    async () => {
      const inspect = async (...args: string[]) => {
        const { stdout } = await promisify(execFile)(
          "npx",
          [
            ...INSPECTOR,
            "--cli",
            `${relay.url}/mcp`,
            "--transport",
            "http",
            "--header",
            `Authorization: Bearer ${relay.key}`,
            ...args,
          ],
          { timeout: 90_000 },
        );
        return JSON.parse(stdout);
      };
      const listed = await inspect("--method", "tools/list");
      expect((listed.tools as { name: string }[]).map((t) => t.name)).toContain("send_message");
      const routed = await inspect(
        "--method",
        "tools/call",
        "--tool-name",
        "route",
        "--tool-arg",
        "input=I want a refund",
      );
      expect(routed.structuredContent).toMatchObject({ agent: "billing" });
    },
    120_000,
  );
});
