import { exports } from "cloudflare:workers";
import {
  Client,
  StreamableHTTPClientTransport,
  TRACEPARENT_META_KEY,
  TRACESTATE_META_KEY,
} from "@modelcontextprotocol/client";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/client/validators/cf-worker";
import { beforeAll, describe, expect, it } from "vitest";
import { derivedSpanId } from "../../src/telemetry/span-ids";
import { parseTraceparent } from "../../src/telemetry/trace-context";
import { fakeMcpServer } from "../fakes/mcp-server";
import { answer, callTool } from "../fakes/openai";
import { llmServer } from "../fakes/server";
import { fakeWebhookAgent, replyOutput } from "../fakes/webhook-agent";
import { ALPHA_KEY, call, newSession, putAgents } from "./helpers";
import { script } from "./run-fixtures";

/**
 * MCP both ways in a run's trace (docs/observability.md, Propagation): the `tools/list` a turn
 * needs before it goes out carries the turn's `traceparent`, as its `tools/call` does; and a
 * `send_message` tool call to Relay's own MCP server runs in the trace its `params._meta`
 * carries (SEP-414), sent by the official client SDK, before the `/mcp` request's headers.
 */

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE}-${CALLER_SPAN}-01`;
const META_TRACE = "0af7651916cd43dd8448eb211c80319c";
const META_SPAN = "b7ad6b7169203331";
const META_TRACEPARENT = `00-${META_TRACE}-${META_SPAN}-01`;
/** A server no other test file lists: its listing is made by this file's run. */
const CATALOG_URL = "https://mcp.test/traced-catalog";

const AGENTS = [
  { name: "shop", description: "Catalog", tools: { allow: ["catalog"] } },
  { name: "hook", kind: "webhook", endpoint: "https://hook.test/traced" },
];

beforeAll(async () => {
  const tool = await call("PUT", "/v1/tools/catalog", { name: "catalog", kind: "mcp", url: CATALOG_URL, timeout_s: 5 });
  if (tool.status !== 201) throw new Error(JSON.stringify(tool.json));
  await putAgents(AGENTS);
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
});

/** A header's traceparent, parsed (it must be a valid one). */
function parent(headers: Record<string, string>) {
  const parsed = parseTraceparent(headers.traceparent);
  expect(parsed, `traceparent ${headers.traceparent}`).not.toBeNull();
  return parsed!;
}

describe("Relay's MCP client", () => {
  it("the listing a turn needs carries the turn's trace, as its tools/call does", async () => {
    const server = fakeMcpServer(CATALOG_URL);
    llmServer.use(server.handler);
    script({ shop: [callTool("catalog__echo", { text: "hi" }), answer("Echoed.")] });
    const id = await newSession("shop");
    const res = await call(
      "POST",
      `/v1/sessions/${id}/messages`,
      { role: "user", content: "echo hi" },
      { headers: { traceparent: TRACEPARENT, tracestate: "vendor=abc" } },
    );
    const run = res.json.run;
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    const start = run.events.find((e: { event_type: string }) => e.event_type === "agent_start");
    const turn = { trace_id: TRACE, span_id: derivedSpanId(TRACE, start.event_id, "turn"), sampled: true };
    const listings = server.requests.filter((r) => r.method === "tools/list");
    expect(listings).toHaveLength(1);
    expect(parent(listings[0]!.headers)).toEqual(turn);
    expect(listings[0]!.headers.tracestate).toBe("vendor=abc");
    // Every request of the listing's connection (its discovery too), and the call after it.
    const listed = server.requests.findIndex((r) => r.method === "tools/list");
    for (const r of server.requests.slice(0, listed + 1).filter((r) => r.http === "POST"))
      expect(parent(r.headers), r.method).toEqual(turn);
    expect(parent(server.calls[0]!.headers)).toEqual(turn);
    // The call's _meta holds the same context, for a server that reads it there.
    expect(server.calls[0]!.meta).toMatchObject({
      traceparent: server.calls[0]!.headers.traceparent,
      tracestate: "vendor=abc",
    });
  });
});

/** The official 2.x client, connected to Relay's `/mcp` through the test Worker, with `headers` on every request. */
async function mcpClient(headers: Record<string, string> = {}): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL("http://relay.test/mcp"), {
    fetch: (input, init) => (exports as any).default.fetch(new Request(input, init)),
    requestInit: { headers: { Authorization: `Bearer ${ALPHA_KEY}`, ...headers } },
  });
  const client = new Client(
    { name: "trace-tests", version: "1.0.0" },
    { jsonSchemaValidator: new CfWorkerJsonSchemaValidator(), versionNegotiation: { mode: "auto" } },
  );
  await client.connect(transport);
  return client;
}

/** send_message to the webhook agent with `meta` in the call's `_meta`; the trace the agent's delivery carried. */
async function sendTraced(client: Client, meta: Record<string, unknown>) {
  const hook = fakeWebhookAgent({ url: "https://hook.test/traced", respond: () => replyOutput("done") });
  llmServer.use(hook.handler);
  const result = await client.callTool({
    name: "send_message",
    arguments: { agent: "hook", content: "hello" },
    _meta: meta,
  });
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  expect(result.structuredContent).toMatchObject({ status: "completed" });
  const headers = hook.deliveries[0]!.headers;
  return { trace_id: parent(headers).trace_id, sampled: parent(headers).sampled, tracestate: headers.tracestate };
}

describe("Relay's MCP server: send_message", () => {
  it("runs in the trace of the call's _meta, with its tracestate", async () => {
    const client = await mcpClient();
    try {
      const sent = await sendTraced(client, {
        [TRACEPARENT_META_KEY]: `00-${META_TRACE}-${META_SPAN}-00`,
        [TRACESTATE_META_KEY]: "meta=1",
      });
      expect(sent).toEqual({ trace_id: META_TRACE, sampled: false, tracestate: "meta=1" });
    } finally {
      await client.close();
    }
  });

  it("_meta wins over the request's headers when both are valid; the headers' tracestate does not come with it", async () => {
    const client = await mcpClient({ traceparent: TRACEPARENT, tracestate: "header=1" });
    try {
      expect(await sendTraced(client, { [TRACEPARENT_META_KEY]: META_TRACEPARENT })).toEqual({
        trace_id: META_TRACE,
        sampled: true,
        tracestate: undefined,
      });
      // Without a trace in _meta, the headers' as before.
      expect(await sendTraced(client, {})).toEqual({ trace_id: TRACE, sampled: true, tracestate: "header=1" });
    } finally {
      await client.close();
    }
  });

  it("an invalid _meta traceparent, or one that is not a string, leaves the headers' trace", async () => {
    const client = await mcpClient({ traceparent: TRACEPARENT });
    try {
      for (const bad of [`00-${META_TRACE.toUpperCase()}-${META_SPAN}-01`, "junk", 42, { id: META_TRACE }]) {
        const sent = await sendTraced(client, { [TRACEPARENT_META_KEY]: bad, [TRACESTATE_META_KEY]: "meta=1" });
        expect(sent, JSON.stringify(bad)).toEqual({ trace_id: TRACE, sampled: true, tracestate: undefined });
      }
    } finally {
      await client.close();
    }
  });
});
