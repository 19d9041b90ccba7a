import { beforeAll, describe, expect, it } from "vitest";
import { flushOutbox, sessionStub } from "../durable-objects/helpers";
import { expectForgedCursorsRefused } from "./forged-cursors";
import { BETA_KEY, call } from "./helpers";

/**
 * `/v1/inbox` end to end: a human agent's turn puts an item in the inbox, the tenant-wide
 * list shows it once the session's outbox has flushed to D1, and a resolve through the
 * API completes the run it paused.
 */

beforeAll(async () => {
  for (const agent of [
    { name: "clerk", kind: "human", description: "A person at the desk", timeout_s: 3600 },
    { name: "nurse", kind: "human", description: "Another person", timeout_s: 3600 },
  ]) {
    const res = await call("PUT", `/v1/agents/${agent.name}`, agent);
    if (res.status >= 300) throw new Error(JSON.stringify(res.json));
  }
});

/** A session held by `agent` whose user message waits for that person; flushed to D1. */
async function waiting(
  agent = "clerk",
  content = "please check my order",
): Promise<{ session: string; item: string; run: string }> {
  const created = await call("POST", "/v1/sessions", { agent });
  const session: string = created.json.id;
  const res = await call("POST", `/v1/sessions/${session}/messages`, { role: "user", content });
  expect(res.json.run).toMatchObject({ status: "awaiting_human", pending: { kind: "human", agent } });
  await flushOutbox(sessionStub("alpha", session).stub);
  return { session, item: res.json.run.pending.inbox_id, run: res.json.run.id };
}

const list = async (query: string): Promise<string[]> =>
  (await call("GET", `/v1/inbox?${query}`)).json.items.map((i: { id: string }) => i.id);

describe("the tenant-wide inbox", () => {
  it("lists what waits for a person, filtered by agent, status and kind; no content in the list", async () => {
    const first = await waiting("clerk");
    const second = await waiting("nurse");
    const page = await call("GET", "/v1/inbox?agent=clerk&status=open");
    expect(page.status).toBe(200);
    const listed = page.json.items.find((i: { id: string }) => i.id === first.item);
    expect(listed).toEqual({
      id: first.item,
      kind: "human_turn",
      status: "open",
      session_id: first.session,
      agent: "clerk",
      run_id: first.run,
      handoff_id: null,
      reason: expect.any(String),
      created_at: expect.any(String),
      expires_at: expect.any(String),
      closed_at: null,
      resolved_by: null,
    });
    expect(JSON.stringify(page.json)).not.toContain("please check my order");
    expect(await list("agent=clerk")).not.toContain(second.item);
    expect(await list("agent=nurse&kind=human_turn")).toContain(second.item);
    expect(await list("agent=nurse&kind=escalation")).toEqual([]);
    expect(await list("agent=nurse&status=resolved")).toEqual([]);
  });

  it("pages oldest first by cursor", async () => {
    const items = [(await waiting("nurse")).item, (await waiting("nurse")).item, (await waiting("nurse")).item];
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { json: { items: { id: string }[]; next_cursor: string | null } } = await call(
        "GET",
        `/v1/inbox?agent=nurse&limit=2${cursor ? `&cursor=${cursor}` : ""}`,
      );
      expect(page.json.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.json.items.map((i) => i.id));
      cursor = page.json.next_cursor;
    } while (cursor !== null);
    expect(seen).toEqual([...seen].sort());
    expect(seen.slice(-3)).toEqual(items);
    const first = await call("GET", "/v1/inbox?agent=nurse&limit=2");
    await expectForgedCursorsRefused("/v1/inbox?agent=nurse&limit=2", first.json.next_cursor);
  });

  it("GET /v1/inbox/:id is the item live from its session, with the reply once answered", async () => {
    const { item, session } = await waiting();
    expect((await call("GET", `/v1/inbox/${item}`)).json).toMatchObject({
      id: item,
      session_id: session,
      status: "open",
      reply: null,
    });
    await call("POST", `/v1/inbox/${item}/resolve`, { reply: "All good." });
    expect((await call("GET", `/v1/inbox/${item}`)).json).toMatchObject({
      status: "resolved",
      reply: "All good.",
      resolved_by: "api",
    });
  });
});

describe("POST /v1/inbox/:id/resolve", () => {
  it("completes the paused run with the reply as the agent's output; the index shows who resolved it", async () => {
    const { item, session, run } = await waiting();
    const res = await call("POST", `/v1/inbox/${item}/resolve`, {
      reply: "Your order ships today.",
      by: "ops@example.com",
    });
    expect(res.status).toBe(200);
    expect(res.json.item).toMatchObject({
      id: item,
      status: "resolved",
      reply: "Your order ships today.",
      resolved_by: "ops@example.com",
    });
    expect(res.json.run).toMatchObject({
      id: run,
      status: "completed",
      output: "Your order ships today.",
      output_agent: "clerk",
    });
    const messages = (await call("GET", `/v1/sessions/${session}/messages`)).json.items;
    expect(messages.at(-1)).toMatchObject({ role: "assistant", content: "Your order ships today.", agent: "clerk" });
    await flushOutbox(sessionStub("alpha", session).stub);
    expect(await list("agent=clerk&status=open")).not.toContain(item);
    const resolved = (await call("GET", "/v1/inbox?agent=clerk&status=resolved")).json.items.find(
      (i: { id: string }) => i.id === item,
    );
    expect(resolved).toMatchObject({
      status: "resolved",
      resolved_by: "ops@example.com",
      closed_at: expect.any(String),
    });
  });

  it("a closed item is 409 INBOX_ITEM_CLOSED and keeps its first answer", async () => {
    const { item } = await waiting();
    expect((await call("POST", `/v1/inbox/${item}/resolve`, { reply: "first" })).status).toBe(200);
    const again = await call("POST", `/v1/inbox/${item}/resolve`, { reply: "second" });
    expect(again.status).toBe(409);
    expect(again.json.error).toMatchObject({
      code: "INBOX_ITEM_CLOSED",
      details: { inbox_id: item, status: "resolved" },
    });
    expect((await call("GET", `/v1/inbox/${item}`)).json.reply).toBe("first");
  });

  it("unknown, malformed and another tenant's items are 404 INBOX_ITEM_NOT_FOUND", async () => {
    const { item, session } = await waiting();
    const unknown = item.replace(/^inb_[0-9a-z]{26}/, "inb_00000000000000000000000000");
    for (const [id, key] of [
      [unknown, undefined],
      ["inb_nope", undefined],
      [item, BETA_KEY],
    ] as const) {
      const res = await call("POST", `/v1/inbox/${id}/resolve`, { reply: "hello" }, { key });
      expect(res.status).toBe(404);
      expect(res.json.error.code).toBe("INBOX_ITEM_NOT_FOUND");
      expect((await call("GET", `/v1/inbox/${id}`, undefined, { key })).json.error.code).toBe("INBOX_ITEM_NOT_FOUND");
    }
    // A session of another tenant is not found either way, and nothing was answered.
    expect((await call("GET", `/v1/inbox?session_id=${session}`, undefined, { key: BETA_KEY })).json.items).toEqual([]);
    expect((await call("GET", `/v1/inbox/${item}`)).json.status).toBe("open");
  });

  it("a bad body is 400 and changes nothing", async () => {
    const { item } = await waiting();
    for (const body of [{}, { reply: "   " }, { reply: "ok", extra: 1 }, { reply: 42 }]) {
      const res = await call("POST", `/v1/inbox/${item}/resolve`, body);
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("VALIDATION_FAILED");
    }
    expect((await call("GET", `/v1/inbox/${item}`)).json.status).toBe("open");
    expect((await call("GET", "/v1/inbox?status=bogus")).json.error.code).toBe("VALIDATION_FAILED");
  });
});
