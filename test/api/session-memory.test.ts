import { describe, expect, it } from "vitest";
import { newSessionId } from "../../src/sessions/ids";
import { drainDue, flushOutbox, sessionStub, setClock } from "../durable-objects/helpers";
import { BETA_KEY, call, newSession, putAgents } from "./helpers";

/** `/v1/sessions/:id/memory` (docs/memory.md, Facts): the session's facts, read and changed by people. */

const memory = (id: string) => `/v1/sessions/${id}/memory`;
const put = (id: string, key: string, value: unknown, options?: Parameters<typeof call>[3]) =>
  call("PUT", `${memory(id)}/${key}`, { value }, options);

async function session(): Promise<string> {
  await putAgents([{ name: "support" }]);
  return newSession("support");
}

/** The session's audit records of its memory, from its object (read-your-writes). */
async function memoryRecords(id: string): Promise<{ action: string; actor_type: string; details: object }[]> {
  const page = await call("GET", `/v1/sessions/${id}/audit?limit=200`);
  return page.json.items.filter((r: { action: string }) => r.action.startsWith("memory."));
}

describe("session memory API", () => {
  it("starts empty, with its limits", async () => {
    const id = await session();
    const res = await call("GET", memory(id));
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ facts: [], chars: 0, limits: { facts: 50, value_chars: 500, total_chars: 8000 } });
  });

  it("writes facts as a person's, lists them by key, replaces a key written again", async () => {
    const id = await session();
    const written = await put(id, "order.id", "A-1042");
    expect(written.status).toBe(200);
    expect(written.json).toEqual({ key: "order.id", value: "A-1042", agent: null, updated_at: expect.any(String) });
    expect((await put(id, "customer", "  Ada  ")).json.value).toBe("Ada");
    expect((await put(id, "order.id", "A-2001")).json.value).toBe("A-2001");

    const listed = await call("GET", memory(id));
    expect(listed.json.facts.map((f: { key: string; value: string }) => [f.key, f.value])).toEqual([
      ["customer", "Ada"],
      ["order.id", "A-2001"],
    ]);
    expect(listed.json.chars).toBe("customer".length + 3 + "order.id".length + 6);
  });

  it("deletes a fact (204), and answers 404 NOT_FOUND for a key it does not hold", async () => {
    const id = await session();
    await put(id, "plan", "pro");
    expect((await call("DELETE", `${memory(id)}/plan`)).status).toBe(204);
    expect((await call("GET", memory(id))).json.facts).toEqual([]);
    const again = await call("DELETE", `${memory(id)}/plan`);
    expect(again.status).toBe(404);
    expect(again.json.error).toMatchObject({ code: "NOT_FOUND", details: { key: "plan" } });
  });

  it("refuses a 51st fact with 409 MEMORY_FULL and changes nothing; a key written again still fits", async () => {
    const id = await session();
    for (let i = 0; i < 50; i++) expect((await put(id, `k${i}`, "v")).status).toBe(200);
    const before = (await call("GET", memory(id))).json;
    const refused = await put(id, "one-more", "v");
    expect(refused.status).toBe(409);
    expect(refused.json.error).toMatchObject({ code: "MEMORY_FULL", details: { facts: 51, limits: { facts: 50 } } });
    expect((await call("GET", memory(id))).json).toEqual(before);
    expect((await memoryRecords(id)).length).toBe(50);
    expect((await put(id, "k7", "w")).status).toBe(200);
  });

  it("takes one of several writes racing for the last place", async () => {
    const id = await session();
    for (let i = 0; i < 49; i++) await put(id, `k${i}`, "v");
    const raced = await Promise.all(["a", "b", "c", "d", "e"].map((key) => put(id, key, "v")));
    expect(raced.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409]);
    expect((await call("GET", memory(id))).json.facts).toHaveLength(50);
  });

  it("refuses characters past 8,000 with 409 MEMORY_FULL", async () => {
    const id = await session();
    // 16 facts of 2–3 + 490 characters: 7,878; 123 more is one too many.
    for (let i = 0; i < 16; i++) await put(id, `f${i}`, "x".repeat(490));
    const { chars } = (await call("GET", memory(id))).json;
    expect(chars).toBe(7878);
    const refused = await put(id, "z", "y".repeat(8000 - chars));
    expect(refused.status).toBe(409);
    expect(refused.json.error).toMatchObject({ code: "MEMORY_FULL", details: { chars: 8001 } });
    expect((await put(id, "z", "y".repeat(8000 - chars - 1))).status).toBe(200);
  });

  it("refuses a bad key or value with 400 VALIDATION_FAILED, writing nothing", async () => {
    const id = await session();
    for (const key of ["_hidden", "a%20b", "k".repeat(65), "%C3%BC"]) {
      const res = await put(id, key, "v");
      expect(res.status, key).toBe(400);
      expect(res.json.error.code, key).toBe("VALIDATION_FAILED");
    }
    for (const value of ["", "   ", "v".repeat(501), 42]) {
      const res = await put(id, "k", value);
      expect(res.status, String(value)).toBe(400);
      expect(res.json.error.code).toBe("VALIDATION_FAILED");
      expect(JSON.stringify(res.json)).not.toContain("vvvvv");
    }
    expect((await call("PUT", `${memory(id)}/k`, { value: "v", agent: "support" })).status).toBe(400);
    expect((await call("DELETE", `${memory(id)}/_hidden`)).json.error.code).toBe("VALIDATION_FAILED");
    expect((await call("GET", memory(id))).json.facts).toEqual([]);
  });

  it("answers 404 for a session it never made, or another tenant's", async () => {
    const id = await session();
    await put(id, "k", "v");
    for (const other of [newSessionId(), "not-a-session"]) {
      for (const res of [await call("GET", memory(other)), await put(other, "k", "v")]) {
        expect(res.status).toBe(404);
        expect(res.json.error.code).toBe("SESSION_NOT_FOUND");
      }
    }
    expect((await call("GET", memory(id), undefined, { key: BETA_KEY })).status).toBe(404);
    expect((await put(id, "k", "beta's", { key: BETA_KEY })).status).toBe(404);
    expect((await call("DELETE", `${memory(id)}/k`, undefined, { key: BETA_KEY })).status).toBe(404);
    expect((await call("GET", memory(id))).json.facts).toMatchObject([{ key: "k", value: "v" }]);
  });

  it("refuses writes without a key: 401, nothing written", async () => {
    const id = await session();
    await put(id, "k", "v");
    expect((await put(id, "k", "changed", { key: null })).status).toBe(401);
    expect((await call("DELETE", `${memory(id)}/k`, undefined, { key: null })).status).toBe(401);
    expect((await call("GET", memory(id), undefined, { key: null })).status).toBe(401);
    expect((await call("GET", memory(id))).json.facts).toMatchObject([{ key: "k", value: "v" }]);
  });

  it("refuses reads and writes of a deleted session (404) and an expired one (410)", async () => {
    const deleted = await session();
    await put(deleted, "k", "v");
    expect((await call("DELETE", `/v1/sessions/${deleted}`)).status).toBe(204);
    for (const res of [
      await call("GET", memory(deleted)),
      await put(deleted, "k", "w"),
      await call("DELETE", `${memory(deleted)}/k`),
    ])
      expect(res.json.error.code).toBe("SESSION_NOT_FOUND");

    const created = await call("POST", "/v1/sessions", { agent: "support", ttl_s: 60 });
    const expired = created.json.id;
    await put(expired, "k", "v");
    const { stub } = sessionStub("alpha", expired);
    await setClock(stub, Date.parse((await call("GET", `/v1/sessions/${expired}`)).json.expires_at) + 1);
    await drainDue(stub);
    for (const res of [await put(expired, "k", "w"), await call("DELETE", `${memory(expired)}/k`)]) {
      expect(res.status).toBe(410);
      expect(res.json.error.code).toBe("SESSION_EXPIRED");
    }
  });

  it("audits each write and delete with the key, never the value, in the object and in D1", async () => {
    const id = await session();
    const secret = "lives at 12 Privet Drive";
    await put(id, "address", secret);
    await put(id, "address", `${secret}, flat 2`);
    await call("DELETE", `${memory(id)}/address`);
    expect(await memoryRecords(id)).toMatchObject([
      {
        action: "memory.fact_written",
        actor: "api",
        actor_type: "user",
        agent: "support",
        details: { key: "address" },
      },
      { action: "memory.fact_written", details: { key: "address" } },
      { action: "memory.fact_deleted", actor_type: "user", details: { key: "address" } },
    ]);
    for (const record of await memoryRecords(id)) expect(Object.keys(record.details)).toEqual(["key"]);
    await flushOutbox(sessionStub("alpha", id).stub);
    const d1 = await call("GET", `/v1/audit?session_id=${id}&limit=200`);
    expect(d1.json.items.filter((r: { action: string }) => r.action.startsWith("memory."))).toHaveLength(3);
    expect(JSON.stringify(d1.json)).not.toContain("Privet");
    expect(JSON.stringify((await call("GET", `/v1/sessions/${id}/audit?limit=200`)).json)).not.toContain("Privet");
  });

  it("a write keeps the session alive: its idle expiry moves on", async () => {
    const id = await session();
    const { stub } = sessionStub("alpha", id);
    const before = Date.parse((await call("GET", `/v1/sessions/${id}`)).json.expires_at);
    await setClock(stub, Date.now() + 60_000);
    await put(id, "k", "v");
    const after = Date.parse((await call("GET", `/v1/sessions/${id}`)).json.expires_at);
    expect(after).toBeGreaterThanOrEqual(before + 60_000);
  });
});
