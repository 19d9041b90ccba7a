import { beforeAll, describe, expect, it } from "vitest";
import { derivedSpanId } from "../../src/telemetry/span-ids";
import { parseTraceparent } from "../../src/telemetry/trace-context";
import { fakeMcpServer } from "../fakes/mcp-server";
import { answer, callTool } from "../fakes/openai";
import { llmServer } from "../fakes/server";
import { call, newSession, putAgents } from "./helpers";
import { script } from "./run-fixtures";

/**
 * MCP in a run's trace (docs/observability.md, Propagation): the `tools/list` a turn needs
 * before it goes out carries the turn's `traceparent`, as its `tools/call` does.
 */

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE}-${CALLER_SPAN}-01`;
/** A server no other test file lists: its listing is made by this file's run. */
const CATALOG_URL = "https://mcp.test/traced-catalog";

const AGENTS = [{ name: "shop", description: "Catalog", tools: { allow: ["catalog"] } }];

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
  });
});
