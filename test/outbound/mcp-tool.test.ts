import { http } from "msw";
import { describe, expect, it } from "vitest";
import { callMcpTool, IDEMPOTENCY_META_KEY, listMcpTools, type McpCallOptions } from "../../src/outbound/mcp-tool";
import { type FakeMcp, type FakeMcpOptions, fakeMcpServer, type McpRevision } from "../fakes/mcp-server";
import { llmServer } from "../fakes/server";

/**
 * The MCP executor against the official SDKs' servers (docs/mcp.md, Revisions): a 2026-07-28
 * server (`@modelcontextprotocol/server`) is spoken to statelessly after `server/discover`; a
 * 2025-11-25 server (the 1.x SDK, with sessions) refuses the probe and gets `initialize`.
 * Each test takes its own server URL: the era verdict is kept per isolate by URL.
 */

let next = 0;
const serverAt = (revision: McpRevision, options: Omit<FakeMcpOptions, "revision"> = {}) => {
  const url = `https://mcp-${revision}.test/t${next++}`;
  const fake = fakeMcpServer(url, { revision, ...options });
  llmServer.use(fake.handler);
  return { url, fake, server: { name: "orders", url, timeout_s: 1, max_response_bytes: 65536 } };
};

const options = (tenant = "alpha", values: Record<string, string> = { Authorization: "Bearer t" }): McpCallOptions => ({
  tenant,
  policy: { allowLocal: false, relayHosts: [] },
  headers: { ok: true, values },
});

const echo = { function_name: "orders__echo", name: "echo" };
const lookup = { function_name: "orders__lookup_order", name: "lookup_order" };

/** The POSTs' JSON-RPC methods, and whether any request carried a session. */
const exchange = (fake: FakeMcp) => ({
  methods: fake.requests.filter((r) => r.http === "POST").map((r) => r.method),
  sessions: fake.requests.filter((r) => r.headers["mcp-session-id"] !== undefined).length,
});

describe("a 2026-07-28 server", () => {
  it("is probed with server/discover, then listed and called with no initialize and no session", async () => {
    const { fake, server } = serverAt("2026-07-28");
    const listed = await listMcpTools(server, options());
    expect(listed).toEqual({
      ok: true,
      tools: [
        expect.objectContaining({ name: "lookup_order", description: "Looks an order up by id" }),
        expect.objectContaining({ name: "echo" }),
      ],
    });
    expect(exchange(fake)).toEqual({ methods: ["server/discover", "tools/list"], sessions: 0 });
    const posts = fake.requests.filter((r) => r.http === "POST");
    // Every request names its method in Mcp-Method and the revision in MCP-Protocol-Version.
    expect(posts.map((r) => r.headers["mcp-method"])).toEqual(["server/discover", "tools/list"]);
    expect(posts.map((r) => r.headers["mcp-protocol-version"])).toEqual(["2026-07-28", "2026-07-28"]);
    expect(posts.every((r) => r.headers.authorization === "Bearer t")).toBe(true);

    const called = await callMcpTool(server, echo, { text: "hi" }, "ses_1:call_1", options());
    expect(called).toMatchObject({ ok: true, output: "hi" });
    expect(fake.calls[0]!.meta).toMatchObject({ [IDEMPOTENCY_META_KEY]: "ses_1:call_1" });
    // No GET stream and no DELETE: there is no session to end.
    expect(fake.requests.every((r) => r.http === "POST")).toBe(true);
    expect(exchange(fake).sessions).toBe(0);
  });

  it("the verdict is kept: the next connection of the tenant makes no probe; another tenant or token probes", async () => {
    const { fake, server } = serverAt("2026-07-28");
    await callMcpTool(server, echo, { text: "1" }, "k1", options());
    await callMcpTool(server, echo, { text: "2" }, "k2", options());
    expect(exchange(fake).methods).toEqual(["server/discover", "tools/call", "tools/call"]);
    await callMcpTool(server, echo, { text: "3" }, "k3", options("beta"));
    await callMcpTool(server, echo, { text: "4" }, "k4", options("alpha", { Authorization: "Bearer other" }));
    expect(exchange(fake).methods.filter((m) => m === "server/discover")).toHaveLength(3);
  });

  it("a JSON-RPC error is MCP_ERROR for a listing and an error output for a call, as with 2025-11-25", async () => {
    const down = serverAt("2026-07-28", { failList: true });
    expect(await listMcpTools(down.server, options())).toEqual({
      ok: false,
      code: "MCP_ERROR",
      message: "'orders' could not list its tools: MCP error -32603: the tool index is down",
    });
    const failing = serverAt("2026-07-28", { failCall: true });
    expect(await callMcpTool(failing.server, echo, { text: "hi" }, "k", options())).toMatchObject({
      ok: false,
      output: "Error: 'orders__echo' failed: MCP error -32000: the order system is down",
    });
  });

  it("a tool that would ask the user for input is an error output: Relay declares no elicitation", async () => {
    const { fake, server } = serverAt("2026-07-28", { inputRequired: "elicit" });
    const called = await callMcpTool(server, lookup, { order_id: "o-1" }, "k", options());
    // The SDK's server refuses with 2026-07-28's -32021 before it returns input_required.
    expect(called).toMatchObject({
      ok: false,
      output:
        "Error: 'orders__lookup_order' failed: MCP error -32021: Cannot request input 'confirm' (elicitation/create): the request's client capabilities do not declare the required capability",
    });
    // Asked once, never retried with an answer.
    expect(exchange(fake).methods.filter((m) => m === "tools/call")).toHaveLength(1);
  });

  it("an input_required result is an error output, never answered or retried", async () => {
    const { fake, server } = serverAt("2026-07-28", { inputRequired: "state" });
    const called = await callMcpTool(server, lookup, { order_id: "o-1" }, "k", options());
    expect(called.ok).toBe(false);
    expect(called.output).toMatch(
      /^Error: 'orders__lookup_order' failed: Unsupported result type 'input_required' for tools\/call/,
    );
    // Auto-fulfilment would send the state back in a second tools/call.
    expect(exchange(fake).methods.filter((m) => m === "tools/call")).toHaveLength(1);
  });

  it("a call that outlives its deadline is an error output within the deadline", async () => {
    const { server } = serverAt("2026-07-28", { callDelayMs: 5_000 });
    const started = Date.now();
    const called = await callMcpTool(server, lookup, { order_id: "o-1" }, "k", options());
    // The request's own timeout (timeout_s) ends it before the whole call's deadline (twice that).
    expect(called).toMatchObject({ ok: false, output: "Error: 'orders__lookup_order' failed: Request timed out" });
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

describe("a 2025-11-25 server (the 1.x SDK)", () => {
  it("refuses the probe; Relay initializes, calls in the session it opened, and ends it", async () => {
    const { fake, server } = serverAt("2025-11-25");
    const listed = await listMcpTools(server, options());
    expect(listed.ok && listed.tools.map((t) => t.name)).toEqual(["lookup_order", "echo"]);
    const { methods } = exchange(fake);
    expect(methods[0]).toBe("server/discover");
    expect(methods.slice(1)).toEqual(["initialize", "notifications/initialized", "tools/list"]);
    // After the handshake every request carries the session, and the last one ends it.
    const afterInit = fake.requests.slice(2);
    expect(afterInit.every((r) => r.headers["mcp-session-id"])).toBe(true);
    expect(afterInit.every((r) => r.headers["mcp-protocol-version"] === "2025-11-25")).toBe(true);
    expect(fake.requests.at(-1)!.http).toBe("DELETE");
    // No standalone GET stream: a connection that lists or calls once has no use for one.
    expect(fake.requests.some((r) => r.http === "GET")).toBe(false);

    const called = await callMcpTool(server, echo, { text: "hi" }, "ses_1:call_1", options());
    expect(called).toMatchObject({ ok: true, output: "hi" });
    expect(fake.calls[0]!.meta).toEqual({ [IDEMPOTENCY_META_KEY]: "ses_1:call_1" });
  });

  it("answers sent as Server-Sent Events are read as the JSON ones are", async () => {
    const { fake, server } = serverAt("2025-11-25", { sse: true });
    const listed = await listMcpTools(server, options());
    expect(listed).toMatchObject({ ok: true, tools: [{ name: "lookup_order" }, { name: "echo" }] });
    const called = await callMcpTool(server, echo, { text: "hi" }, "ses_1:call_1", options());
    expect(called).toMatchObject({ ok: true, output: "hi" });
    expect(fake.calls.map((c) => c.tool)).toEqual(["echo"]);
  });

  it("the legacy verdict is kept: the next connection goes straight to initialize", async () => {
    const { fake, server } = serverAt("2025-11-25");
    await callMcpTool(server, echo, { text: "1" }, "k1", options());
    const probes = exchange(fake).methods.filter((m) => m === "server/discover").length;
    await callMcpTool(server, echo, { text: "2" }, "k2", options());
    expect(probes).toBe(1);
    expect(exchange(fake).methods.filter((m) => m === "server/discover")).toHaveLength(1);
    expect(exchange(fake).methods.filter((m) => m === "initialize")).toHaveLength(2);
  });

  it("a JSON-RPC error is MCP_ERROR for a listing and an error output for a call", async () => {
    const down = serverAt("2025-11-25", { failList: true });
    expect(await listMcpTools(down.server, options())).toEqual({
      ok: false,
      code: "MCP_ERROR",
      message: "'orders' could not list its tools: MCP error -32603: the tool index is down",
    });
    const failing = serverAt("2025-11-25", { failCall: true });
    expect(await callMcpTool(failing.server, echo, { text: "hi" }, "k", options())).toMatchObject({
      ok: false,
      output: "Error: 'orders__echo' failed: MCP error -32000: the order system is down",
    });
  });

  it("a call that outlives its deadline is an error output within the deadline", async () => {
    const { server } = serverAt("2025-11-25", { callDelayMs: 5_000 });
    const started = Date.now();
    const called = await callMcpTool(server, lookup, { order_id: "o-1" }, "k", options());
    // The request's own timeout (timeout_s) ends it before the whole call's deadline (twice that).
    expect(called).toMatchObject({ ok: false, output: "Error: 'orders__lookup_order' failed: Request timed out" });
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

describe("a server that changes revision under a kept verdict", () => {
  it("the call made on the stale verdict fails and drops it; the next connection probes and works", async () => {
    const url = `https://mcp-moved.test/t${next++}`;
    const server = { name: "orders", url, timeout_s: 1, max_response_bytes: 65536 };
    const modern = fakeMcpServer(url);
    llmServer.use(modern.handler);
    expect((await callMcpTool(server, echo, { text: "1" }, "k1", options())).ok).toBe(true);
    // The server is replaced by a 2025-11-25 one at the same address.
    const legacy = fakeMcpServer(url, { revision: "2025-11-25" });
    llmServer.use(legacy.handler);
    expect((await callMcpTool(server, echo, { text: "2" }, "k2", options())).ok).toBe(false);
    expect(await callMcpTool(server, echo, { text: "3" }, "k3", options())).toMatchObject({ ok: true, output: "3" });
    expect(exchange(legacy).methods).toContain("initialize");
  });
});

describe("a server that never answers", () => {
  it("the probe is held to the deadline: the listing fails with MCP_ERROR in time", async () => {
    const url = `https://mcp-silent.test/t${next++}`;
    llmServer.use(http.all(url, () => new Promise<never>(() => undefined)));
    const started = Date.now();
    const listed = await listMcpTools({ name: "silent", url, timeout_s: 1, max_response_bytes: 65536 }, options());
    expect(listed).toEqual({
      ok: false,
      code: "MCP_ERROR",
      message: "'silent' could not list its tools: Version negotiation probe timed out after 1000ms",
    });
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});
