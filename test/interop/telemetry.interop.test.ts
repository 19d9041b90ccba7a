import { createServer, type IncomingMessage, type Server } from "node:http";
import { Message, type Task } from "@a2a-js/sdk";
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeModel, loopback, PORTS, putAgents, type Relay, startRelay, until } from "./harness";
import { type Listening, startMcpServers } from "./servers";

/**
 * One trace from the caller through every agent (docs/observability.md), on loopback: Relay
 * under `wrangler dev` with the operator's OTLP endpoint set, a tenant endpoint with content
 * capture on, and a local OTLP/HTTP receiver taking both. A caller's request starts a routed
 * run whose first agent calls an MCP tool (an official SDK server) and hands off; the second
 * waits for an approval of its refund tool, then hands off to the customer's webhook agent.
 */

const OTLP_PORT = PORTS.bad + 1;
const HOOK_PORT = PORTS.bad + 2;
const TOOL_PORT = PORTS.bad + 3;

const CALLER_TRACE = "5bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "10f067aa0ba902b7";

interface OtlpValue {
  stringValue?: string;
  intValue?: string;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: OtlpValue }[];
  links: { traceId: string; spanId: string }[];
  status: { code: number };
}
interface Received {
  path: string;
  headers: IncomingMessage["headers"];
  tenant: string | undefined;
  spans: OtlpSpan[];
}

const attr = (span: OtlpSpan, key: string) => {
  const v = span.attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? v?.intValue ?? v?.doubleValue ?? v?.boolValue;
};

let relay: Relay;
const model = new FakeModel();
let mcp: Listening & { requests: { method: string | undefined; headers: IncomingMessage["headers"] }[] };
const servers: Server[] = [];
const received: Received[] = [];
const hookHeaders: IncomingMessage["headers"][] = [];
const toolHeaders: IncomingMessage["headers"][] = [];

async function listen(port: number, answer: (req: IncomingMessage, body: string) => [number, string]) {
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const [status, text] = answer(req, body);
    res.writeHead(status, { "content-type": "application/json" });
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  servers.push(server);
}

beforeAll(async () => {
  await model.start(PORTS.model);
  mcp = await startMcpServers(PORTS.mcp);
  // The OTLP/HTTP receiver: JSON-encoded ExportTraceServiceRequest, answered with an empty ExportTraceServiceResponse.
  await listen(OTLP_PORT, (req, body) => {
    const request = JSON.parse(body) as {
      resourceSpans: {
        resource: { attributes: OtlpSpan["attributes"] };
        scopeSpans: { spans: OtlpSpan[] }[];
      }[];
    };
    for (const rs of request.resourceSpans)
      received.push({
        path: req.url ?? "",
        headers: req.headers,
        tenant: rs.resource.attributes.find((a) => a.key === "relay.tenant")?.value.stringValue,
        spans: rs.scopeSpans.flatMap((s) => s.spans),
      });
    return [200, "{}"];
  });
  await listen(HOOK_PORT, (req) => {
    hookHeaders.push(req.headers);
    return [200, JSON.stringify({ output: "Closed: your refund is on its way." })];
  });
  await listen(TOOL_PORT, (req) => {
    toolHeaders.push(req.headers);
    return [200, JSON.stringify({ refunded: true })];
  });
  relay = await startRelay({ RELAY_OTLP_ENDPOINT: `${loopback(OTLP_PORT)}/operator/v1/traces` });
  const put = async (path: string, body: unknown) => {
    const res = await relay.api("PUT", path, body);
    if (res.status >= 300) throw new Error(`PUT ${path}: ${JSON.stringify(res.json)}`);
  };
  await put("/v1/secrets/otel-token", { value: "Bearer tenant-collector" });
  await put("/v1/config/telemetry", {
    endpoint: `${loopback(OTLP_PORT)}/tenant/v1/traces`,
    headers: { Authorization: "otel-token" },
    capture_content: true,
  });
  await put("/v1/tools/parcels", { name: "parcels", kind: "mcp", url: `${mcp.url}/mcp`, timeout_s: 10 });
  await put("/v1/tools/refund", {
    name: "refund",
    kind: "http",
    description: "Refunds an order",
    url: `${loopback(TOOL_PORT)}/refund`,
    parameters: { type: "object", properties: { order_id: { type: "string" } } },
  });
  await putAgents(relay, [
    {
      name: "desk",
      description: "Parcels and where they are.",
      triggers: { keywords: ["parcel"], priority: 90 },
      tools: { allow: ["parcels"] },
      handoffs: ["billing"],
    },
    {
      name: "billing",
      description: "Refunds.",
      tools: { allow: ["refund"], confirmation: { require: ["refund"], timeout_s: 600 } },
      handoffs: ["closer"],
    },
    { name: "closer", description: "Closes cases.", kind: "webhook", endpoint: `${loopback(HOOK_PORT)}/agent` },
  ]);
  const routing = await relay.api("PUT", "/v1/config/routing", {
    strategy: "rule",
    threshold: 50,
    llm: { provider: "openai", model: "fake" },
  });
  if (routing.status !== 200) throw new Error(`routing: ${JSON.stringify(routing.json)}`);
  const refresh = await relay.api("POST", "/v1/tools/parcels/refresh");
  if (refresh.status !== 200) throw new Error(`refresh: ${JSON.stringify(refresh.json)}`);
}, 180_000);

afterAll(async () => {
  await relay?.stop();
  model.stop();
  await mcp?.stop();
  for (const server of servers) server.close();
});

/** Every span each destination received for `trace`, by destination. */
function spansOf(trace: string) {
  const of = (prefix: string) =>
    received.filter((r) => r.path.startsWith(prefix)).flatMap((r) => r.spans.filter((s) => s.traceId === trace));
  return { operator: of("/operator/"), tenant: of("/tenant/") };
}

describe("one trace from the caller through every agent", () => {
  it("a routed run with an MCP tool, two handoffs, an approval and a webhook agent is one tree under the caller's span", async () => {
    model.script(
      "desk",
      { calls: [{ name: "parcels__track_parcel", arguments: { parcel: "P-9" } }] },
      { calls: [{ name: "transfer_to_billing", arguments: { reason: "refund for ann@example.com" } }] },
    );
    model.script(
      "billing",
      { calls: [{ name: "refund", arguments: { order_id: "P-9" } }] },
      { calls: [{ name: "transfer_to_closer", arguments: { reason: "refunded" } }] },
    );
    const session = await relay.api("POST", "/v1/sessions", { input: "my parcel P-9 never came" });
    expect(session.json.current_agent).toBe("desk");
    const res = await fetch(`${relay.url}/v1/sessions/${session.json.id}/messages`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${relay.key}`,
        "Content-Type": "application/json",
        traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`,
        tracestate: "caller=1",
      },
      body: JSON.stringify({ role: "user", content: "where is parcel P-9? refund me if lost" }),
    });
    const paused = (await res.json()) as { run: { status: string; trace_id: string } };
    expect(paused.run).toMatchObject({ status: "awaiting_approval", trace_id: CALLER_TRACE });
    const item = (await relay.api("GET", `/v1/sessions/${session.json.id}/inbox`)).json.items[0];
    const resolved = await relay.api("POST", `/v1/inbox/${item.id}/resolve`, { decision: "approve", by: "ops" });
    expect(resolved.json.run).toMatchObject({ status: "completed", output: "Closed: your refund is on its way." });

    const { operator } = await until(
      "the run's spans at the operator's endpoint",
      async () => spansOf(CALLER_TRACE),
      (s) =>
        s.operator.some((x) => x.name === "invoke_agent closer") &&
        s.tenant.some((x) => x.name === "invoke_agent closer"),
    );
    const names = operator.map((s) => s.name);
    for (const name of [
      "relay.route",
      "invoke_agent desk",
      "execute_tool parcels__track_parcel",
      "invoke_agent billing",
      "relay.approval",
      "execute_tool refund",
      "invoke_agent closer",
    ])
      expect(names, name).toContain(name);
    expect(names.filter((n) => n === "relay.handoff")).toHaveLength(2);
    expect(names.filter((n) => n.startsWith("chat ")).length).toBeGreaterThanOrEqual(4);
    // One tree: every span's parent is the caller's span or a span of the trace.
    const ids = new Set(operator.map((s) => s.spanId));
    expect(ids.size).toBe(operator.length);
    for (const s of operator) expect([CALLER_SPAN, ...ids], s.name).toContain(s.parentSpanId);
    // An agent's turn is an internal span; a webhook's answer is also a client span of that name.
    const byName = (name: string) => operator.find((s) => s.name === name && s.kind !== 3)!;
    for (const top of ["relay.route", "invoke_agent desk", "invoke_agent billing", "invoke_agent closer"])
      expect(byName(top).parentSpanId, top).toBe(CALLER_SPAN);
    const desk = byName("invoke_agent desk");
    const billing = byName("invoke_agent billing");
    const closer = byName("invoke_agent closer");
    expect(attr(desk, "gen_ai.conversation.id")).toBe(session.json.id);
    expect(attr(desk, "relay.agent.outcome")).toBe("handed_off");
    expect(byName("execute_tool parcels__track_parcel")).toMatchObject({ parentSpanId: desk.spanId });
    expect(attr(byName("execute_tool parcels__track_parcel"), "relay.tool.kind")).toBe("mcp");
    expect(byName("relay.approval")).toMatchObject({ parentSpanId: billing.spanId });
    expect(attr(byName("relay.approval"), "relay.approval.outcome")).toBe("approved");
    expect(attr(closer, "gen_ai.provider.name")).toBe("relay.webhook");
    const answered = operator.find((s) => s.name === "invoke_agent closer" && s.kind === 3)!;
    expect(answered.parentSpanId).toBe(closer.spanId);
    // The handed-to turn links to the handoff that started it.
    const handoffs = operator.filter((s) => s.name === "relay.handoff");
    expect(billing.links.map((l) => l.spanId)).toEqual([
      handoffs.find((h) => attr(h, "relay.handoff.to") === "billing")!.spanId,
    ]);
    // The operator's export never carries content.
    expect(operator.flatMap((s) => s.attributes.map((a) => a.key))).not.toContain("gen_ai.tool.call.arguments");

    // The customer's webhook agent, the MCP server and the http tool were called in this trace, under the turn that called them.
    const hook = hookHeaders.at(-1)!;
    expect(hook.traceparent).toBe(`00-${CALLER_TRACE}-${closer.spanId}-01`);
    expect(hook.tracestate).toBe("caller=1");
    expect(toolHeaders.at(-1)!.traceparent).toBe(`00-${CALLER_TRACE}-${billing.spanId}-01`);
    const call = mcp.requests.filter((r) => r.method === "tools/call").at(-1)!;
    expect(call.headers.traceparent).toBe(`00-${CALLER_TRACE}-${desk.spanId}-01`);
  });

  it("the tenant's collector gets the same spans, with its header, and content PII-masked", async () => {
    const { operator, tenant } = spansOf(CALLER_TRACE);
    expect(tenant.map((s) => s.spanId).sort()).toEqual(operator.map((s) => s.spanId).sort());
    const request = received.find((r) => r.path.startsWith("/tenant/"))!;
    expect(request.headers.authorization).toBe("Bearer tenant-collector");
    expect(request.tenant).toBe(received.find((r) => r.path.startsWith("/operator/"))!.tenant);
    const handoff = tenant.find((s) => s.name === "relay.handoff" && attr(s, "relay.handoff.to") === "billing")!;
    expect(attr(handoff, "relay.handoff.reason")).toBe("refund for [REDACTED_EMAIL]");
    const track = tenant.find((s) => s.name === "execute_tool parcels__track_parcel")!;
    expect(JSON.parse(attr(track, "gen_ai.tool.call.arguments") as string)).toEqual({ parcel: "P-9" });
  });

  it("an A2A SendMessage in a caller's trace is a server span of the conventions, over the run's spans", async () => {
    const trace = "6bf92f3577b34da6a3ce929d0e0e4736";
    const withTrace: typeof fetch = (input, init = {}) => {
      const headers = new Headers(init.headers);
      headers.set("Authorization", `Bearer ${relay.key}`);
      headers.set("traceparent", `00-${trace}-${CALLER_SPAN}-01`);
      return fetch(input, { ...init, headers });
    };
    const client = await new ClientFactory({
      transports: [new JsonRpcTransportFactory({ fetchImpl: withTrace })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: withTrace }),
    }).createFromUrl(`${relay.url}/a2a/billing/`);
    model.script("billing", { content: "Refunds take five days." });
    const messageId = crypto.randomUUID();
    const reply = (await client.sendMessage({
      tenant: "",
      message: Message.fromJSON({ messageId, role: "ROLE_USER", parts: [{ text: "how long do refunds take?" }] }),
      configuration: {
        acceptedOutputModes: ["text/plain"],
        taskPushNotificationConfig: undefined,
        returnImmediately: false,
      },
      metadata: undefined,
    })) as Task;
    const { operator } = await until(
      "the A2A run's spans",
      async () => spansOf(trace),
      (s) => s.operator.some((x) => x.name === "SendMessage"),
    );
    const server = operator.find((s) => s.name === "SendMessage")!;
    expect(server.kind).toBe(2);
    expect(server.parentSpanId).toBe(CALLER_SPAN);
    expect(attr(server, "a2a.method.name")).toBe("SendMessage");
    expect(attr(server, "a2a.task.id")).toBe(reply.id);
    expect(attr(server, "a2a.task.state")).toBe("TASK_STATE_COMPLETED");
    expect(attr(server, "a2a.message.id")).toBe(messageId);
    expect(attr(server, "gen_ai.conversation.id")).toBe(reply.contextId);
    expect(operator.find((s) => s.name === "invoke_agent billing")!.parentSpanId).toBe(server.spanId);
  });
});
