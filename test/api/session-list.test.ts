import { beforeAll, describe, expect, it } from "vitest";
import { writeAuditBatch } from "../../src/audit/d1-store";
import type { AuditRecord } from "../../src/audit/record";
import { drainDue, flushOutbox, sessionStub, setClock } from "../durable-objects/helpers";
import { shardOf } from "../shards";
import { expectForgedCursorsRefused } from "./forged-cursors";
import { BETA_KEY, call } from "./helpers";

/**
 * GET /v1/sessions reads the D1 sessions index, which the sessions' outboxes feed: every
 * test flushes the objects' outboxes before it lists.
 */

beforeAll(async () => {
  for (const key of [undefined, BETA_KEY]) {
    await call("PUT", "/v1/agents/lister", { name: "lister", handoffs: ["taker"] }, key ? { key } : undefined);
    await call("PUT", "/v1/agents/taker", { name: "taker" }, key ? { key } : undefined);
  }
});

/** A session started by `agent` for the alpha tenant (or `key`'s), flushed to D1. */
async function flushedSession(body: Record<string, unknown>, key?: string): Promise<string> {
  const created = await call("POST", "/v1/sessions", body, key ? { key } : undefined);
  expect(created.status).toBe(201);
  await flushOutbox(sessionStub(key === BETA_KEY ? "beta" : "alpha", created.json.id).stub);
  return created.json.id;
}

async function flush(id: string, tenant = "alpha"): Promise<void> {
  await flushOutbox(sessionStub(tenant, id).stub);
}

/** Follows next_cursor to the end; every page's ids, in order. */
async function allPages(query: string, key?: string): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | null = null;
  do {
    const res = await call(
      "GET",
      `/v1/sessions?${query}${cursor ? `&cursor=${cursor}` : ""}`,
      undefined,
      key ? { key } : undefined,
    );
    expect(res.status).toBe(200);
    pages.push(res.json.items.map((s: { id: string }) => s.id));
    cursor = res.json.next_cursor;
  } while (cursor !== null && pages.length < 50);
  return pages;
}

describe("GET /v1/sessions", () => {
  it("lists the tenant's sessions newest first, with cursor paging", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await flushedSession({ agent: "lister", metadata: { i } }));
    const pages = await allPages("limit=2&agent=lister&status=active");
    // The file's first sessions: nothing else is active with this agent yet.
    expect(pages).toEqual([[ids[4], ids[3]], [ids[2], ids[1]], [ids[0]]]);
    const first = await call("GET", "/v1/sessions?limit=1");
    expect(Object.keys(first.json).sort()).toEqual(["items", "next_cursor"]);
    expect(first.json.items[0]).toEqual({
      id: ids[4],
      status: "active",
      initial_agent: "lister",
      current_agent: "lister",
      created_at: expect.any(String),
      updated_at: expect.any(String),
      ended_at: null,
      message_count: 0,
      handoff_count: 0,
    });
    expect(first.json.next_cursor).toEqual(expect.any(String));
    await expectForgedCursorsRefused("/v1/sessions?limit=1", first.json.next_cursor);
  });

  it("counts messages and handoffs, and follows the current agent", async () => {
    const id = await flushedSession({ agent: "lister", input: "hello" });
    await call("POST", `/v1/sessions/${id}/messages`, { role: "agent", content: "hi" });
    const moved = await call("POST", "/v1/handoffs", {
      session_id: id,
      source_agent: "lister",
      target_agent: "taker",
      reason: "over to you",
    });
    expect(moved.json.status).toBe("completed");
    await flush(id);

    const taker = await call("GET", "/v1/sessions?agent=taker");
    const row = taker.json.items.find((s: { id: string }) => s.id === id);
    expect(row).toMatchObject({
      status: "active",
      initial_agent: "lister",
      current_agent: "taker",
      message_count: 2,
      handoff_count: 1,
    });
    expect(Date.parse(row.updated_at)).toBeGreaterThanOrEqual(Date.parse(row.created_at));
    const lister = await call("GET", "/v1/sessions?agent=lister&limit=200");
    expect(lister.json.items.map((s: { id: string }) => s.id)).not.toContain(id);
  });

  it("filters by status: deleted and expired sessions leave the active list", async () => {
    const deleted = await flushedSession({ agent: "lister" });
    const expired = await flushedSession({ agent: "lister", ttl_s: 60 });
    const kept = await flushedSession({ agent: "lister" });
    expect((await call("DELETE", `/v1/sessions/${deleted}`)).status).toBe(204);
    await flush(deleted);
    const { stub } = sessionStub("alpha", expired);
    const expiresAt = Date.parse((await call("GET", `/v1/sessions/${expired}`)).json.expires_at);
    await setClock(stub, expiresAt + 1);
    await drainDue(stub);

    const ids = async (status: string) =>
      (await call("GET", `/v1/sessions?status=${status}&limit=200`)).json.items.map((s: { id: string }) => s.id);
    const active = await ids("active");
    expect(active).toContain(kept);
    expect(active).not.toContain(deleted);
    expect(active).not.toContain(expired);
    expect(await ids("deleted")).toContain(deleted);
    expect(await ids("expired")).toContain(expired);
    const gone = (await call("GET", "/v1/sessions?status=expired&limit=200")).json.items.find(
      (s: { id: string }) => s.id === expired,
    );
    expect(gone).toMatchObject({ status: "expired", ended_at: new Date(expiresAt + 1).toISOString() });
  });

  it("counts nothing twice when the outbox sends a batch again", async () => {
    const id = await flushedSession({ agent: "lister", input: "one" });
    await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "two", run: false });
    await call("POST", "/v1/handoffs", { session_id: id, source_agent: "lister", target_agent: "taker", reason: "r" });
    await flush(id);
    const before = (await call("GET", "/v1/sessions?agent=taker&limit=200")).json.items.find(
      (s: { id: string }) => s.id === id,
    );
    expect(before).toMatchObject({ message_count: 2, handoff_count: 1 });

    // The records exactly as the object's outbox holds them, delivered a second time.
    const local = await call("GET", `/v1/sessions/${id}/audit?limit=500`);
    const records: AuditRecord[] = local.json.items.map(
      ({ flushed: _flushed, ...record }: AuditRecord & { flushed: boolean }) => record,
    );
    expect(records.length).toBeGreaterThan(5);
    await writeAuditBatch(await shardOf("alpha"), records);
    await writeAuditBatch(await shardOf("alpha"), records.slice(2));
    const after = (await call("GET", "/v1/sessions?agent=taker&limit=200")).json.items.find(
      (s: { id: string }) => s.id === id,
    );
    expect(after).toEqual(before);
  });

  it("keeps tenants apart", async () => {
    const alpha = await flushedSession({ agent: "lister" });
    const beta = await flushedSession({ agent: "lister" }, BETA_KEY);
    const betaIds = (await allPages("limit=200", BETA_KEY)).flat();
    expect(betaIds).toContain(beta);
    expect(betaIds).not.toContain(alpha);
    const alphaIds = (await allPages("limit=200")).flat();
    expect(alphaIds).toContain(alpha);
    expect(alphaIds).not.toContain(beta);
  });

  it("refuses bad queries", async () => {
    for (const query of ["status=archived", "limit=0", "limit=201", "agent=Not%20A%20Slug", "color=blue"]) {
      const res = await call("GET", `/v1/sessions?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.json.error.code).toBe("VALIDATION_FAILED");
    }
    const cursor = await call("GET", "/v1/sessions?cursor=%21%21%21");
    expect(cursor.status).toBe(400);
    expect(cursor.json.error.code).toBe("INVALID_CURSOR");
    expect((await call("GET", "/v1/sessions", undefined, { key: null })).status).toBe(401);
  });
});
