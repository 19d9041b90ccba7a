import { describe, expect, inject, it } from "vitest";
import {
  createRelayClient,
  isLiveEvent,
  type LiveEvent,
  paginate,
  RelayApiError,
  RelayConnectionError,
  RelayReplyError,
  unwrap,
} from "../../client/src/index.ts";
import { runStreamOf } from "../../client/src/run-stream.ts";
import { runMessage, testClient, UNREACHABLE_URL } from "../cli/run-cli";

/** The typed client and its stream and list helpers against `wrangler dev`. */

const relay = testClient();

async function session(agent = "billing"): Promise<string> {
  return (await unwrap(relay.api.POST("/v1/sessions", { body: { agent } }))).id;
}

describe("unwrap", () => {
  it("answers the data of a typed call", async () => {
    const agent = await unwrap(relay.api.GET("/v1/agents/{name}", { params: { path: { name: "billing" } } }));
    expect(agent.definition.name).toBe("billing");
  });

  it("throws the API's error as a RelayApiError: status, code, message, details", async () => {
    const failed = unwrap(relay.api.POST("/v1/route", { body: { input: "" } }));
    await expect(failed).rejects.toBeInstanceOf(RelayApiError);
    await expect(failed).rejects.toMatchObject({ status: 400, code: "VALIDATION_FAILED" });
    const missing = await unwrap(relay.api.GET("/v1/sessions/{id}", { params: { path: { id: "ses_nope" } } })).catch(
      (e: RelayApiError) => e,
    );
    expect(missing).toMatchObject({ status: 404, code: "SESSION_NOT_FOUND" });
  });

  it("throws a RelayConnectionError when nothing answers", async () => {
    const offline = createRelayClient({ url: UNREACHABLE_URL, apiKey: "k" });
    const failed = unwrap(offline.api.GET("/health"), UNREACHABLE_URL);
    await expect(failed).rejects.toBeInstanceOf(RelayConnectionError);
    await expect(failed).rejects.toThrow(`cannot reach ${UNREACHABLE_URL} (ECONNREFUSED)`);
  });
});

describe("streamMessage: a run's Server-Sent Events as an async iterator", () => {
  it("yields the run's live events in order, then the answer", async () => {
    const stream = await relay.streamMessage(await session("triage"), "my invoice is wrong");
    const events: LiveEvent[] = [];
    for await (const event of stream) events.push(event);
    const { run } = await stream.result();
    expect(events[0]!.type).toBe("run_started");
    expect(events.map((e) => e.type)).toContain("handoff");
    expect(events.at(-1)!.id).toBe(stream.lastEventId);
    // Stored events in order; the pieces of an answer (message.delta) carry no id.
    const stored = events.filter((e) => e.type !== "message.delta");
    expect(stored.map((e) => e.id)).toEqual(stored.map((e) => e.id).sort());
    expect(events.filter((e) => e.type === "message.delta").every((e) => e.id === "")).toBe(true);
    expect(events.every((e) => e.run_id === run.id)).toBe(true);
    const handoff = events.find((e) => isLiveEvent(e, "handoff"));
    expect(handoff && isLiveEvent(handoff, "handoff") && handoff.data.details.to_agent).toBe("billing");
    expect(run).toMatchObject({ status: "completed", output_agent: "billing" });
  });

  it("result() reads the events left; a refused message is a RelayApiError before any stream", async () => {
    const id = await session("supervisor");
    const first = await relay.streamMessage(id, "I need a person");
    expect((await first.result()).run.status).toBe("awaiting_human");
    await expect(relay.streamMessage(id, "hello again")).rejects.toMatchObject({
      status: 409,
      code: "RUN_IN_PROGRESS",
    });
  });

  it("parses frames split anywhere, and passes on event types it does not know", async () => {
    const text =
      'id: evt_1\nevent: run_started\ndata: {"id":"evt_1","type":"run_started","session_id":"s","run_id":"r","at":"t","data":{}}\n\n' +
      ": keep-alive\n\n" +
      'id: evt_2\nevent: message.delta\ndata: {"delta":"Hel"}\n\n' +
      'event: result\ndata: {"message":{"role":"user","content":"x"},"run":{"id":"r","status":"completed"}}\n\n';
    const bytes = new TextEncoder().encode(text);
    for (const size of [1, 2, 7, 64, bytes.length]) {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < bytes.length; i += size) controller.enqueue(bytes.slice(i, i + size));
          controller.close();
        },
      });
      const stream = runStreamOf(body, "test");
      const events: LiveEvent[] = [];
      for await (const event of stream) events.push(event);
      expect(events.map((e) => [e.id, e.type])).toEqual([
        ["evt_1", "run_started"],
        ["evt_2", "message.delta"],
      ]);
      expect(events[1]!.data).toEqual({ delta: "Hel" });
      expect((await stream.result()).run.id).toBe("r");
    }
  });

  it("a stream that ends before its result is a RelayConnectionError", async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(
          new TextEncoder().encode('event: run_started\ndata: {"id":"e","type":"run_started","data":{}}\n\n'),
        );
        controller.close();
      },
    });
    await expect(runStreamOf(body, "test").result()).rejects.toBeInstanceOf(RelayConnectionError);
  });
});

describe("list and paginate: every item, page by page", () => {
  it("follows next_cursor to the last page, fetching pages only as the loop asks", async () => {
    let calls = 0;
    const counting = createRelayClient({
      url: relay.url,
      apiKey: inject("relayKey"),
      fetch: (request) => {
        calls++;
        return fetch(request);
      },
    });
    const names: string[] = [];
    for await (const agent of counting.list("/v1/agents", { query: { limit: 2 } })) names.push(agent.definition.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(["billing", "sales", "supervisor", "technical", "triage"]));
    // One call a page (a last full page may be followed by an empty one).
    expect(calls).toBeGreaterThanOrEqual(Math.ceil(names.length / 2));
    expect(calls).toBeLessThanOrEqual(Math.ceil(names.length / 2) + 1);

    calls = 0;
    for await (const _ of counting.list("/v1/agents", { query: { limit: 2 } })) break;
    expect(calls).toBe(1);
    const three: string[] = [];
    for await (const agent of counting.list("/v1/agents", { query: { limit: 2 } }, { limit: 3 }))
      three.push(agent.definition.name);
    expect(three).toEqual(names.slice(0, 3));
  });

  it("paginate works on any page function, and a path's own parameters go with each page", async () => {
    const id = await session("billing");
    await runMessage(relay, id, "refund please");
    const items: unknown[] = [];
    for await (const item of relay.list("/v1/sessions/{id}/messages", { path: { id }, query: { limit: 1 } }))
      items.push(item);
    expect(items.length).toBeGreaterThanOrEqual(2);
    const pages = [
      { items: [1, 2], next_cursor: "a" },
      { items: [3], next_cursor: null },
    ];
    const seen: number[] = [];
    for await (const n of paginate(async (cursor) => pages[cursor === "a" ? 1 : 0]!)) seen.push(n);
    expect(seen).toEqual([1, 2, 3]);
  });
});

describe("answers this client cannot read: a RelayReplyError, or an error on one line", () => {
  /** A client whose every request gets `answer` (a server that is not Relay, or not this version of it). */
  const answering = (answer: () => Response) =>
    createRelayClient({ url: "http://relay.test", apiKey: "k", fetch: async () => answer() });
  const sse = (text: string) =>
    answering(() => new Response(text, { headers: { "Content-Type": "text/event-stream" } })).streamMessage("s", "hi");

  it("a 2xx body that is not JSON", async () => {
    const html = answering(() => new Response("<html>\n<p>Sign in</p>", { headers: { "Content-Type": "text/html" } }));
    const failed = unwrap(html.api.GET("/v1/agents/{name}", { params: { path: { name: "x" } } }), html.url, "GET x");
    await expect(failed).rejects.toBeInstanceOf(RelayReplyError);
    await expect(failed).rejects.toThrow(/^http:\/\/relay\.test answered GET x with a body that is not JSON \(/);
  });

  it("a list page without items, or without next_cursor (which would repeat the first page forever)", async () => {
    for (const [page, problem] of [
      [{ items: 5 }, "items: expected an array, got a number"],
      [{ items: [{ definition: {} }] }, "next_cursor: expected a string, got undefined"],
      [[], "the body: expected an object, got an array"],
    ] as const) {
      const wrong = answering(() => Response.json(page));
      const names: unknown[] = [];
      const failed = (async () => {
        for await (const agent of wrong.list("/v1/agents")) names.push(agent);
      })();
      await expect(failed).rejects.toBeInstanceOf(RelayReplyError);
      await expect(failed).rejects.toThrow(
        `http://relay.test answered GET /v1/agents with JSON of another shape than this client reads (${problem})`,
      );
      expect(names).toEqual([]);
    }
  });

  it("a message answered with JSON where an event stream was asked for", async () => {
    const json = answering(() => Response.json({ ok: true }));
    await expect(json.streamMessage("s", "hi")).rejects.toThrow(
      "http://relay.test answered POST /v1/sessions/{id}/messages with application/json where an event stream was asked for",
    );
  });

  it("a stream whose result is not JSON, or has no run", async () => {
    const notJson = await sse("event: result\ndata: <oops>\n\n");
    await expect(notJson.result()).rejects.toBeInstanceOf(RelayReplyError);
    await expect((await sse("event: result\ndata: <oops>\n\n")).result()).rejects.toThrow(
      /answered POST \/v1\/sessions\/\{id\}\/messages with a result event that is not JSON/,
    );
    await expect((await sse('event: result\ndata: {"message":{}}\n\n')).result()).rejects.toThrow(
      "(run: expected an object, got undefined)",
    );
  });

  it("an error answer that is a proxy's HTML page: its first words, on one line", async () => {
    const proxy = answering(
      () =>
        new Response("<html>\n  <h1>502 Bad Gateway</h1>\n</html>\n", {
          status: 502,
          headers: { "Content-Type": "text/html" },
        }),
    );
    const failed = await unwrap(proxy.api.GET("/health")).catch((e: RelayApiError) => e);
    expect(failed).toBeInstanceOf(RelayApiError);
    expect(failed).toMatchObject({
      status: 502,
      code: "HTTP_502",
      message: "Relay answered 502 without an error body: <html> <h1>502 Bad Gateway</h1> </html>",
    });
  });
});
