import { runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { IDEMPOTENCY_META_KEY } from "../../src/outbound/mcp-tool";
import { drainDue, sessionStub, setClock, timersOf } from "../durable-objects/helpers";
import { eventually } from "../eventually";
import { fakeMcpServer } from "../fakes/mcp-server";
import { answer, callTool } from "../fakes/openai";
import { llmServer } from "../fakes/server";
import { call, newSession, putAgents, say } from "./helpers";
import { script } from "./run-fixtures";

/**
 * An MCP tools/call a restart cuts off (docs/runs.md, Restarts; docs/mcp.md): the session's
 * object is reset (state.abort, a real crash: workerd logs it as uncaught) while the server
 * works on the call. The resumed run answers the call as
 * interrupted and goes on; the server is never called again, and the trace says interrupted,
 * not ok. The server is the official SDK's (2026-07-28) behind msw; the object, its alarm
 * and D1 are real.
 */

const SERVER = "https://mcp-restart.test/mcp";
const INTERRUPTED = "Error: interrupted by a restart; call it again if it is still needed.";

beforeAll(async () => {
  const tool = await call("PUT", "/v1/tools/orders", { name: "orders", kind: "mcp", url: SERVER, timeout_s: 5 });
  expect(tool.status).toBe(201);
  const clerk = { name: "mcp-clerk", description: "Orders", tools: { allow: ["orders__lookup_order"] } };
  await putAgents([clerk]);
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
});

const until = <T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> =>
  eventually(read, done, { what });

describe("an MCP call a restart cuts off", () => {
  it("is answered interrupted and never made again: the server sees one tools/call", async () => {
    const server = fakeMcpServer(SERVER, { callDelayMs: 2_000 });
    llmServer.use(server.handler);
    const model = script({
      "mcp-clerk": [callTool("orders__lookup_order", { order_id: "o-9" }), answer("Checked after the restart.")],
    });
    const id = await newSession("mcp-clerk");
    const { stub } = sessionStub("alpha", id);

    const cut = say(id, "where is o-9?");
    await until(
      async () => server.calls.length,
      (n) => n === 1,
      "the server received the tools/call",
    );
    // A crash: the object is reset with the call in flight (what a deploy or an exceeded limit does).
    await runInDurableObject(stub, (_instance, state) => state.abort("crash under test")).catch(() => undefined);
    expect((await cut).json.error).toMatchObject({ code: "DEPENDENCY_UNAVAILABLE", details: { reason: "reset" } });

    // The run's watchdog resumes it once the step's deadline has passed (a new stub: the old one broke with the object).
    const restarted = sessionStub("alpha", id).stub;
    const watchdog = (await timersOf(restarted)).timers.find((t) => t.kind === "run.resume");
    expect(watchdog).toBeDefined();
    await setClock(restarted, watchdog!.due_at);
    await drainDue(restarted);
    const traceOf = async () =>
      (await call("GET", `/v1/sessions/${id}/trace?limit=200`)).json.items as Record<string, any>[];
    const runId = (await traceOf())[0]!.correlation_id as string;
    const run = await until(
      async () => (await call("GET", `/v1/sessions/${id}/runs/${runId}`)).json,
      (r) => r.status !== "running",
      "the resumed run ended",
    );
    const trace = await traceOf();
    expect(run).toMatchObject({ status: "completed", output: "Checked after the restart." });

    expect(server.calls).toHaveLength(1);
    expect(server.methods.filter((m) => m === "tools/call")).toHaveLength(1);
    const toolCalls = trace.filter((e) => e.event_type === "tool_call");
    expect(toolCalls.map((e) => e.details.outcome)).toEqual(["interrupted"]);
    const history = (await call("GET", `/v1/sessions/${id}/messages?limit=200`)).json.items;
    const output = history.find((i: { role: string }) => i.role === "tool");
    expect(output).toMatchObject({ tool_name: "orders__lookup_order", content: INTERRUPTED });
    expect(model.requests.at(-1)!.body.messages.find((m) => m.role === "tool")?.content).toBe(INTERRUPTED);
  });

  it("carries the call's idempotency id in _meta, the same id a repeat would carry", async () => {
    const server = fakeMcpServer(SERVER);
    llmServer.use(server.handler);
    script({ "mcp-clerk": [callTool("orders__lookup_order", { order_id: "o-1" }), answer("Shipped.")] });
    const id = await newSession("mcp-clerk");
    expect((await say(id, "where is o-1?")).json.run).toMatchObject({ status: "completed" });
    const history = (await call("GET", `/v1/sessions/${id}/messages?limit=200`)).json.items;
    const callId = history.find((i: { role: string }) => i.role === "tool").tool_call_id;
    expect(server.calls).toHaveLength(1);
    // Beside the run's trace context (docs/observability.md, Propagation).
    expect(server.calls[0]!.meta).toEqual({
      [IDEMPOTENCY_META_KEY]: `${id}:${callId}`,
      traceparent: server.calls[0]!.headers.traceparent,
    });
  });
});
