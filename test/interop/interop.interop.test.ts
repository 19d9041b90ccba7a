import { Message, type StreamResponse, type Task, TaskState } from "@a2a-js/sdk";
import { type Client, ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeModel, loopback, PORTS, putAgents, type Relay, startRelay, until } from "./harness";
import { type RemoteAgent, startRemoteAgent } from "./remote-agent";
import { type Listening, type McpRequest, type ParcelCall, startBadAgents, startMcpServers } from "./servers";

/**
 * Relay against the official SDKs, over real HTTP on loopback (docs/a2a.md, docs/mcp.md):
 * Relay under `wrangler dev`; the A2A JS SDK's client talking to Relay's agents; a remote
 * agent served by the A2A JS SDK's server that a Relay agent hands off to; MCP servers built
 * with the MCP TypeScript SDKs, one per revision (2026-07-28 from `@modelcontextprotocol/server`,
 * 2025-11-25 from the 1.x SDK), whose tool a Relay agent's run calls. The model is a scripted
 * OpenAI-compatible server in this process.
 */

let relay: Relay;
const model = new FakeModel();
let remote: RemoteAgent;
let mcp: Listening & { calls: ParcelCall[]; requests: McpRequest[] };
let bad: Listening;

const AGENTS = [
  {
    name: "billing",
    title: "Billing",
    description: "Invoices, refunds and payments.",
    triggers: { keywords: ["invoice", "refund"], examples: ["I want a refund"], priority: 90 },
    capabilities: [{ name: "refunds", tags: ["money"] }],
  },
  { name: "slowpoke", description: "Thinks for a long time." },
  {
    name: "concierge",
    description: "Welcomes customers and hands orders to the order desk.",
    handoffs: ["order-desk"],
  },
  {
    name: "order-desk",
    kind: "a2a",
    description: "The order desk, an agent of another framework.",
    card_url: `${loopback(PORTS.remote)}/.well-known/agent-card.json`,
  },
  {
    name: "dispatcher",
    description: "Tracks parcels.",
    tools: { allow: ["parcels"], confirmation: { require: ["parcels__track_parcel"], timeout_s: 300 } },
  },
  { name: "bad-card", kind: "a2a", card_url: `${loopback(PORTS.bad)}/notjson/card` },
  { name: "big-card", kind: "a2a", card_url: `${loopback(PORTS.bad)}/huge/card` },
  { name: "silent", kind: "a2a", card_url: `${loopback(PORTS.bad)}/silent/card`, timeout_s: 2 },
  { name: "no-tools", description: "Its MCP server has no tools.", tools: { allow: ["empty"] } },
  { name: "old-dispatcher", description: "Tracks parcels on the old server.", tools: { allow: ["old-parcels"] } },
];

beforeAll(async () => {
  await model.start(PORTS.model);
  remote = await startRemoteAgent(PORTS.remote);
  mcp = await startMcpServers(PORTS.mcp);
  bad = await startBadAgents(PORTS.bad);
  relay = await startRelay();
  // The MCP server's token is in the tenant's vault; the tool names it, never holds it.
  const secret = await relay.api("PUT", "/v1/secrets/parcels-token", { value: "Bearer parcel-secret" });
  if (secret.status >= 300) throw new Error(`PUT secret: ${JSON.stringify(secret.json)}`);
  for (const tool of [
    {
      name: "parcels",
      kind: "mcp",
      description: "Parcel tracking",
      url: `${mcp.url}/mcp`,
      headers: { Authorization: "parcels-token" },
      timeout_s: 10,
    },
    {
      name: "old-parcels",
      kind: "mcp",
      description: "Parcel tracking, 2025-11-25",
      url: `${mcp.url}/legacy/mcp`,
      headers: { Authorization: "parcels-token" },
      timeout_s: 10,
    },
    { name: "empty", kind: "mcp", url: `${mcp.url}/empty` },
  ]) {
    const res = await relay.api("PUT", `/v1/tools/${tool.name}`, tool);
    if (res.status >= 300) throw new Error(`PUT tool ${tool.name}: ${JSON.stringify(res.json)}`);
  }
  await putAgents(relay, AGENTS);
}, 180_000);

afterAll(async () => {
  await relay?.stop();
  model.stop();
  await remote?.stop();
  await mcp?.stop();
  await bad?.stop();
});

/**
 * The official client for a Relay address, with the tenant's key on every request (the card's
 * too). The SDK reads the card at `.well-known/agent-card.json` relative to the address, so an
 * agent's address ends with a slash.
 */
async function a2aClient(path: string): Promise<Client> {
  const authed: typeof fetch = (input, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set("Authorization", `Bearer ${relay.key}`);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl: authed })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: authed }),
  });
  return factory.createFromUrl(`${relay.url}${path}`);
}

const say = (text: string, extra: { taskId?: string; contextId?: string } = {}, returnImmediately = false) => ({
  tenant: "",
  message: Message.fromJSON({ messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }], ...extra }),
  configuration: {
    acceptedOutputModes: ["text/plain"],
    taskPushNotificationConfig: undefined,
    returnImmediately,
  },
  metadata: undefined,
});

const asTask = (reply: Message | Task): Task => {
  if ("messageId" in reply) throw new Error("expected a task, got a message");
  return reply;
};
const answerOf = (task: Task) =>
  (task.artifacts[0]?.parts ?? []).map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
const statusText = (task: Task) =>
  (task.status?.message?.parts ?? []).map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");

describe("a Relay agent through the official A2A JS client", () => {
  it("reads the card, then SendMessage, GetTask and ListTasks", async () => {
    const client = await a2aClient("/a2a/billing/");
    const card = await client.getAgentCard();
    expect(card.name).toBe("Billing");
    expect(card.supportedInterfaces[0]).toMatchObject({ protocolBinding: "JSONRPC", protocolVersion: "1.0" });
    expect(card.skills.map((s) => s.id)).toEqual(["billing", "billing.refunds"]);

    model.script("billing", { content: "Your refund of 40 EUR is on its way." });
    const task = asTask(await client.sendMessage(say("Where is my refund?")));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerOf(task)).toBe("Your refund of 40 EUR is on its way.");
    expect(task.contextId).toMatch(/^ses_/);

    const read = await client.getTask({ tenant: "", id: task.id, historyLength: 1 });
    expect(read.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(read.history).toHaveLength(1);

    const listed = await client.listTasks({
      tenant: "",
      contextId: task.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: "",
      statusTimestampAfter: undefined,
    });
    expect(listed.tasks.map((t) => t.id)).toEqual([task.id]);
    // The same run, through Relay's own API.
    const run = await relay.api("GET", `/v1/sessions/${task.contextId}/runs/${task.id}`);
    expect(run.json).toMatchObject({ status: "completed", agent: "billing" });
  });

  it("SendStreamingMessage: the task, the answer's pieces as artifact updates as the model writes them, then COMPLETED", async () => {
    const client = await a2aClient("/a2a/billing/");
    model.script("billing", { content: "One moment while I check your invoice." });
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream(say("Check my invoice"))) events.push(event);
    const kinds = events.map((e) => e.payload?.$case);
    expect(kinds[0]).toBe("task");
    const pieces = events.flatMap((e) =>
      e.payload?.$case === "artifactUpdate" && !e.payload.value.lastChunk ? [e.payload.value] : [],
    );
    expect(pieces.length).toBeGreaterThan(2);
    const pieceText = (p: (typeof pieces)[number]) => {
      const content = p.artifact?.parts[0]?.content;
      return content?.$case === "text" ? content.value : "";
    };
    expect(pieces.map(pieceText).join("")).toBe("One moment while I check your invoice.");
    const last = events.at(-1)!.payload;
    expect(last?.$case === "statusUpdate" && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("SubscribeToTask joins a running task; CancelTask cancels it and the subscription ends CANCELED", async () => {
    const client = await a2aClient("/a2a/slowpoke/");
    model.script("slowpoke", { content: "Finally done.", delayMs: 8000 });
    const started = asTask(await client.sendMessage(say("take your time", {}, true)));
    expect(started.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    const subscription = client.resubscribeTask({ tenant: "", id: started.id });
    const first = await subscription.next();
    expect(first.value?.payload?.$case).toBe("task");
    const cancelled = await client.cancelTask({ tenant: "", id: started.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    let lastState: TaskState | undefined;
    for await (const event of { [Symbol.asyncIterator]: () => subscription }) {
      if (event.payload?.$case === "statusUpdate") lastState = event.payload.value.status?.state;
    }
    expect(lastState).toBe(TaskState.TASK_STATE_CANCELED);
    await expect(client.cancelTask({ tenant: "", id: started.id, metadata: undefined })).rejects.toMatchObject({
      name: "TaskNotCancelableError",
    });
    await expect(client.getTask({ tenant: "", id: "run_nothing" })).rejects.toMatchObject({
      name: "TaskNotFoundError",
    });
  });

  it("the front door routes a message to the tenant's agent for it; a request without A2A-Version is refused", async () => {
    const client = await a2aClient("/a2a");
    const card = await client.getAgentCard();
    expect(card.skills.map((s) => s.id)).toContain("billing");
    model.script("billing", { content: "Refund approved." });
    const task = asTask(await client.sendMessage(say("I want a refund for invoice 7")));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.metadata?.relay).toMatchObject({ agent: "billing" });
    const res = await fetch(`${relay.url}/a2a/billing`, {
      method: "POST",
      headers: { Authorization: `Bearer ${relay.key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: task.id } }),
    });
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32009);
    // Without the key, a card tells nothing.
    const anonymous = (await (await fetch(`${relay.url}/a2a/billing/.well-known/agent-card.json`)).json()) as {
      name: string;
      skills?: unknown[];
    };
    expect(anonymous.name).toBe("Relay agent");
    expect((anonymous.skills ?? []).map((s) => (s as { id: string }).id)).toEqual(["relay"]);
  });
});

describe("a handoff to a remote agent served by the official A2A JS server SDK", () => {
  it("asks for input once, then answers in the same remote task; later it hands back by Relay's data part", async () => {
    const client = await a2aClient("/a2a/concierge/");
    model.script("concierge", {
      calls: [{ name: "transfer_to_order_desk", arguments: { reason: "an order question" } }],
    });
    remote.script({ ask: "Which order number, please?" });
    const asked = asTask(await client.sendMessage(say("Where is my order?")));
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    // The remote agent's own question, not a generic note (docs/a2a.md).
    expect(statusText(asked)).toBe("Which order number, please?");
    expect(remote.received[0]).toMatchObject({ text: "Where is my order?", continued: null });
    // The handoff's context rides along: the remote's card takes text only, so in the message's metadata.
    expect(remote.received[0]!.data).toEqual([]);
    expect(remote.received[0]!.metadata).toMatchObject({
      relay: {
        agent: "order-desk",
        handoff: { from_agent: "concierge", to_agent: "order-desk", reason: "an order question" },
      },
    });

    remote.script({ answer: "Order A-42 ships tomorrow." });
    const answered = asTask(await client.sendMessage(say("A-42", { taskId: asked.id, contextId: asked.contextId })));
    expect(answered.id).toBe(asked.id);
    expect(answered.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerOf(answered)).toBe("Order A-42 ships tomorrow.");
    expect(answered.metadata?.relay).toMatchObject({ output_agent: "order-desk" });
    // The same remote task continued, in the same remote context.
    expect(remote.received[1]).toMatchObject({ text: "A-42", contextId: remote.received[0]!.contextId });
    expect(remote.received[1]!.continued).not.toBeNull();

    remote.script({ handBack: "concierge", reason: "a billing matter", text: "This one is for the concierge." });
    model.script("concierge", { content: "Back with the concierge: how can I help?" });
    const handedBack = asTask(
      await client.sendMessage(say("Can I change my invoice address?", { contextId: asked.contextId })),
    );
    expect(handedBack.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(handedBack.metadata?.relay).toMatchObject({ output_agent: "concierge" });
    expect(answerOf(handedBack)).toBe("Back with the concierge: how can I help?");
    const handoff = handedBack.history.find((m) => m.parts.some((p) => p.content?.$case === "data"));
    expect(handoff?.parts[1]?.content).toMatchObject({
      $case: "data",
      value: { relay: { handoff: { from: "order-desk", to: "concierge", reason: "a billing matter" } } },
    });
    expect(remote.received[2]).toMatchObject({ contextId: remote.received[0]!.contextId, continued: null });
  });
});

describe("MCP tool servers built with the official MCP TypeScript SDKs", () => {
  it("2026-07-28: its tool is listed and called in a Relay agent's run, with an approval in between", async () => {
    const listing = await relay.api("POST", "/v1/tools/parcels/refresh");
    expect(listing.json.tools).toEqual([
      { name: "parcels__track_parcel", mcp_name: "track_parcel", description: "Where a parcel is now" },
    ]);
    model.script(
      "dispatcher",
      { calls: [{ name: "parcels__track_parcel", arguments: { parcel: "P-1" } }] },
      { content: "Your parcel P-1 is in Lyon." },
    );
    const session = await relay.api("POST", "/v1/sessions", { agent: "dispatcher" });
    const paused = await relay.api("POST", `/v1/sessions/${session.json.id}/messages`, {
      role: "user",
      content: "Where is parcel P-1?",
    });
    expect(paused.json.run).toMatchObject({ status: "awaiting_approval" });
    expect(model.requests.find((r) => r.agent === "dispatcher")?.tools).toContain("parcels__track_parcel");
    expect(mcp.calls).toEqual([]);
    const item = (await relay.api("GET", `/v1/sessions/${session.json.id}/inbox`)).json.items[0];
    expect(item).toMatchObject({ kind: "approval", details: { tool_name: "parcels__track_parcel" } });
    const resolved = await relay.api("POST", `/v1/inbox/${item.id}/resolve`, { decision: "approve", by: "ops" });
    expect(resolved.json.run).toMatchObject({ status: "completed", output: "Your parcel P-1 is in Lyon." });
    expect(mcp.calls).toEqual([{ parcel: "P-1", authorization: "Bearer parcel-secret", revision: "2026-07-28" }]);
    expect(model.requests.filter((r) => r.agent === "dispatcher").at(-1)?.last).toBe("Parcel P-1 is in Lyon.");
    // Stateless: the era found with server/discover, no handshake, no session, the method in a header.
    const exchange = mcp.requests.filter((r) => r.path === "/mcp");
    expect(exchange.map((r) => r.method)).toContain("server/discover");
    expect(exchange.map((r) => r.method)).not.toContain("initialize");
    expect(exchange.filter((r) => r.headers["mcp-session-id"] !== undefined)).toEqual([]);
    expect(exchange.every((r) => r.http === "POST" && r.headers["mcp-method"] === r.method)).toBe(true);
  });

  it("2025-11-25: a server that knows no later revision is initialized, and its tool called", async () => {
    const listing = await relay.api("POST", "/v1/tools/old-parcels/refresh");
    expect(listing.json.tools).toEqual([
      { name: "old-parcels__track_parcel", mcp_name: "track_parcel", description: "Where a parcel is now" },
    ]);
    model.script(
      "old-dispatcher",
      { calls: [{ name: "old-parcels__track_parcel", arguments: { parcel: "P-2" } }] },
      { content: "Your parcel P-2 is in Lyon." },
    );
    const session = await relay.api("POST", "/v1/sessions", { agent: "old-dispatcher" });
    const res = await relay.api("POST", `/v1/sessions/${session.json.id}/messages`, {
      role: "user",
      content: "Where is parcel P-2?",
    });
    expect(res.json.run).toMatchObject({ status: "completed", output: "Your parcel P-2 is in Lyon." });
    expect(mcp.calls.filter((c) => c.revision === "2025-11-25")).toEqual([
      { parcel: "P-2", authorization: "Bearer parcel-secret", revision: "2025-11-25" },
    ]);
    const methods = mcp.requests.filter((r) => r.path === "/legacy/mcp").map((r) => r.method);
    expect(methods).toContain("initialize");
    expect(methods.filter((m) => m === "tools/call")).toHaveLength(1);
  });
});

describe("bad input: each a coded run error, nothing stuck", () => {
  const cases: [string, string][] = [
    ["bad-card", "REMOTE_AGENT_CARD_INVALID"],
    ["big-card", "REMOTE_AGENT_CARD_INVALID"],
    ["silent", "REMOTE_AGENT_TIMEOUT"],
    ["no-tools", "MCP_ERROR"],
  ];
  for (const [agent, code] of cases) {
    it(`${agent}: the run fails with ${code}, and the session takes the next message`, async () => {
      const session = await relay.api("POST", "/v1/sessions", { agent });
      const id = session.json.id as string;
      const res = await relay.api("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "hello" });
      const run = await until(
        `${agent}'s run`,
        async () => (await relay.api("GET", `/v1/sessions/${id}/runs/${res.json.run.id}`)).json,
        (r) => r.status !== "running",
      );
      expect(run).toMatchObject({ status: "failed", error: { code } });
      const next = await relay.api("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "again" });
      expect(next.status).not.toBe(409);
    });
  }
});
