import { describe, expect, it } from "vitest";
import { flushOutbox, sessionStub, setClock } from "../durable-objects/helpers";
import { expectForgedCursorsRefused } from "./forged-cursors";
import { BETA_KEY, call } from "./helpers";

async function sessionWithActivity(key?: string): Promise<string> {
  const options = key ? { key } : undefined;
  await call("PUT", "/v1/agents/support", { name: "support" }, options);
  const { json } = await call("POST", "/v1/sessions", { agent: "support", input: "hello" }, options);
  await call("POST", `/v1/sessions/${json.id}/messages`, { role: "agent", content: "hi there" }, options);
  await call("PATCH", `/v1/sessions/${json.id}/state`, { set: { step: 1 } }, options);
  await flushOutbox(sessionStub(key === BETA_KEY ? "beta" : "alpha", json.id).stub);
  return json.id;
}

describe("audit API", () => {
  it("reads the tenant's log from D1, newest first, with cursor paging", async () => {
    const id = await sessionWithActivity();
    const first = await call("GET", `/v1/audit?session_id=${id}&limit=2`);
    expect(first.status).toBe(200);
    expect(first.json.items.map((r: { action: string }) => r.action)).toEqual([
      "session.state_updated",
      "session.message_added",
    ]);
    const second = await call("GET", `/v1/audit?session_id=${id}&limit=2&cursor=${first.json.next_cursor}`);
    expect(second.json.items.map((r: { action: string }) => r.action)).toEqual([
      "session.message_added",
      "session.created",
    ]);
    expect(second.json.next_cursor).toBeNull();
    await expectForgedCursorsRefused(`/v1/audit?session_id=${id}&limit=2`, first.json.next_cursor);
  });

  it("filters by action, agent and time", async () => {
    const id = await sessionWithActivity();
    const created = await call("GET", `/v1/audit?session_id=${id}&action=session.created`);
    expect(created.json.items).toHaveLength(1);
    expect(created.json.items[0]).toMatchObject({
      session_id: id,
      tenant: "alpha",
      agent: "support",
      actor: "api",
      actor_type: "user",
    });
    const byAgent = await call("GET", `/v1/audit?session_id=${id}&agent=support`);
    expect(byAgent.json.items).toHaveLength(4);
    const future = await call(
      "GET",
      `/v1/audit?session_id=${id}&since=${encodeURIComponent(new Date(Date.now() + 3_600_000 * 48).toISOString())}`,
    );
    expect(future.json.items).toEqual([]);
  });

  it("answers from the session object before D1 has the records (read-your-writes)", async () => {
    await call("PUT", "/v1/agents/support", { name: "support" });
    const { id, stub, rpc } = sessionStub();
    // The object's clock an hour ahead: the flush it schedules is not due while the test reads.
    await setClock(stub, Date.now() + 3_600_000);
    await rpc.create("alpha", id, { agent: "support", capacity: null, metadata: {}, ttl_s: 3600 });
    const local = await call("GET", `/v1/sessions/${id}/audit`);
    expect(local.json.items.map((r: { action: string }) => r.action)).toEqual(["session.created"]);
    expect(local.json).toMatchObject({ pending: 1, items: [{ flushed: false }] });
    expect((await call("GET", `/v1/audit?session_id=${id}`)).json.items).toEqual([]);
  });

  it("keeps tenants apart", async () => {
    const id = await sessionWithActivity(BETA_KEY);
    expect((await call("GET", `/v1/audit?session_id=${id}`)).json.items).toEqual([]);
    expect((await call("GET", `/v1/audit?session_id=${id}`, undefined, { key: BETA_KEY })).json.items).toHaveLength(4);
    expect((await call("GET", `/v1/sessions/${id}/audit`)).status).toBe(404);
  });

  it("refuses bad queries", async () => {
    expect((await call("GET", "/v1/audit?limit=0")).json.error.code).toBe("VALIDATION_FAILED");
    expect((await call("GET", "/v1/audit?since=yesterday")).json.error.code).toBe("VALIDATION_FAILED");
    expect((await call("GET", "/v1/audit?agent=Not%20A%20Slug")).json.error.code).toBe("VALIDATION_FAILED");
    expect((await call("GET", "/v1/audit?color=blue")).json.error.code).toBe("VALIDATION_FAILED");
    expect((await call("GET", "/v1/audit", undefined, { key: null })).status).toBe(401);
  });
});
