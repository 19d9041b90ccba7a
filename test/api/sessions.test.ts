import { describe, expect, it } from "vitest";
import { AuditRecord } from "../../src/audit/record";
import { drainDue, sessionStub } from "../durable-objects/helpers";
import { expectForgedCursorsRefused } from "./forged-cursors";
import { BETA_KEY, call } from "./helpers";

const support = {
  name: "support",
  description: "General help",
  triggers: { keywords: ["help", "question"], priority: 50 },
};
const billing = {
  name: "billing",
  description: "Invoices and refunds",
  triggers: { keywords: ["refund", "invoice"], patterns: ["charged\\s+twice"], priority: 80 },
};

async function registerAgents() {
  await call("PUT", "/v1/agents/support", support);
  await call("PUT", "/v1/agents/billing", billing);
}

describe("sessions API", () => {
  it("creates a session with a named agent, reads it, and refuses an unknown agent", async () => {
    await registerAgents();
    const created = await call("POST", "/v1/sessions", {
      agent: "support",
      metadata: { channel: "web" },
      input: "hello",
    });
    expect(created.status).toBe(201);
    expect(created.json.id).toMatch(/^ses_[0-9a-z]{52}$/);
    expect(created.headers.get("Location")).toBe(`/v1/sessions/${created.json.id}`);
    expect(created.json).toMatchObject({
      status: "active",
      current_agent: "support",
      handoff_stack: ["support"],
      metadata: { channel: "web" },
      state: {},
      history_length: 1,
      in_flight_handoff: null,
      agent_status: {},
    });
    const read = await call("GET", `/v1/sessions/${created.json.id}`);
    expect(read.status).toBe(200);
    expect(read.json).toEqual(created.json);

    const unknown = await call("POST", "/v1/sessions", { agent: "nobody" });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.code).toBe("AGENT_NOT_FOUND");
  });

  it("routes a session with no agent and records the decision", async () => {
    await registerAgents();
    const created = await call("POST", "/v1/sessions", { input: "I was charged twice, I want a refund" });
    expect(created.status).toBe(201);
    expect(created.json.current_agent).toBe("billing");
    expect(created.json.route).toMatchObject({ agent: "billing" });
    const audit = await call("GET", `/v1/sessions/${created.json.id}/audit`);
    expect(audit.json.items.map((r: { action: string }) => r.action)).toEqual([
      "route.decided",
      "session.created",
      "session.message_added",
    ]);
    expect(audit.json.items[0]).toMatchObject({ actor: "router", actor_type: "system", agent: "billing" });
  });

  it("creates nothing when the router finds no agent: 422 NO_ROUTE with the decision", async () => {
    await registerAgents();
    const res = await call("POST", "/v1/sessions", { input: "zzz qqq xyzzy" });
    expect(res.status).toBe(422);
    expect(res.json.error.code).toBe("NO_ROUTE");
    expect(res.json.error.details.route).toMatchObject({ agent: null, method: "fallback" });
  });

  it("refuses a body with neither agent nor input, and bad fields", async () => {
    const none = await call("POST", "/v1/sessions", {});
    expect(none.status).toBe(400);
    expect(none.json.error.code).toBe("VALIDATION_FAILED");
    const badTtl = await call("POST", "/v1/sessions", { agent: "support", ttl_s: 5 });
    expect(badTtl.json.error.code).toBe("VALIDATION_FAILED");
  });

  it("appends messages, patches state, reports agent status, and lists history", async () => {
    await registerAgents();
    const { json: session } = await call("POST", "/v1/sessions", { agent: "support" });
    const path = `/v1/sessions/${session.id}`;

    const user = await call("POST", `${path}/messages`, { role: "user", content: "my printer is on fire", run: false });
    expect(user.status).toBe(201);
    expect(user.json).toMatchObject({
      seq: 1,
      history_length: 1,
      message: { role: "user", content: "my printer is on fire" },
    });
    const agent = await call("POST", `${path}/messages`, { role: "agent", content: "please step away" });
    expect(agent.json.message).toMatchObject({ role: "assistant", agent: "support" });

    const patched = await call("PATCH", `${path}/state`, { set: { tier: "gold", tries: 2 } });
    expect(patched.status).toBe(200);
    expect(patched.json.state).toEqual({ tier: "gold", tries: 2 });
    const unset = await call("PATCH", `${path}/state`, { set: { tries: 3 }, unset: ["tier"] });
    expect(unset.json.state).toEqual({ tries: 3 });
    expect((await call("PATCH", `${path}/state`, {})).json.error.code).toBe("VALIDATION_FAILED");

    const busy = await call("POST", `${path}/agent-status`, { agent: "support", status: "busy" });
    expect(busy.json.agent_status).toEqual({ support: "busy" });
    expect((await call("POST", `${path}/agent-status`, { agent: "support", status: "sleepy" })).status).toBe(400);

    const history = await call("GET", `${path}/messages?limit=1`);
    expect(history.json.items).toHaveLength(1);
    expect(history.json.next_cursor).toEqual(expect.any(String));
    const rest = await call("GET", `${path}/messages?after=1`);
    expect(rest.json.items.map((i: { content: string }) => i.content)).toEqual(["please step away"]);
    // The opaque cursor stands for the position after sequence number 1.
    expect((await call("GET", `${path}/messages?cursor=${history.json.next_cursor}`)).json).toEqual(rest.json);
    expect(rest.json.next_cursor).toBeNull();

    const audit = await call("GET", `${path}/audit`);
    expect(audit.json.items.map((r: { action: string }) => r.action)).toEqual([
      "session.created",
      "session.message_added",
      "session.message_added",
      "session.state_updated",
      "session.state_updated",
      "session.agent_status_changed",
    ]);
    expect(audit.json.items[2]).toMatchObject({ actor: "support", actor_type: "agent" });
    for (const { flushed: _, ...record } of audit.json.items)
      expect(AuditRecord.safeParse(record).error).toBeUndefined();
    // The audit trail records that a message happened, never what it said.
    expect(audit.json.items[1].details).toMatchObject({ role: "user", chars: "my printer is on fire".length });
    expect(JSON.stringify(audit.json)).not.toContain("printer");
    expect(JSON.stringify(audit.json)).not.toContain("step away");
  });

  it("pages messages and the session's audit with opaque cursors", async () => {
    await registerAgents();
    const { json: session } = await call("POST", "/v1/sessions", { agent: "support", input: "one" });
    const path = `/v1/sessions/${session.id}`;
    for (const content of ["two", "three"])
      await call("POST", `${path}/messages`, { role: "user", content, run: false });

    const contents: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await call("GET", `${path}/messages?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.json.items.length).toBeLessThanOrEqual(2);
      contents.push(...page.json.items.map((i: { content: string }) => i.content));
      cursor = page.json.next_cursor;
    } while (cursor !== null);
    expect(contents).toEqual(["one", "two", "three"]);

    const first = await call("GET", `${path}/audit?limit=2`);
    expect(first.json).toMatchObject({ next_cursor: expect.any(String), pending: expect.any(Number) });
    const rest = await call("GET", `${path}/audit?cursor=${first.json.next_cursor}`);
    expect(rest.json.next_cursor).toBeNull();
    expect([...first.json.items, ...rest.json.items].map((r: { action: string }) => r.action)).toEqual([
      "session.created",
      "session.message_added",
      "session.message_added",
      "session.message_added",
    ]);
    // `after` (a position the caller knows) still works, but not together with a cursor.
    expect((await call("GET", `${path}/audit?after=${first.json.items[1].id}`)).json.items).toEqual(rest.json.items);
    for (const query of [
      `messages?after=1&cursor=${first.json.next_cursor}`,
      `audit?after=x&cursor=${first.json.next_cursor}`,
    ]) {
      expect((await call("GET", `${path}/${query}`)).json.error.code, query).toBe("VALIDATION_FAILED");
    }
    // A cursor of another list, or none of ours, is refused.
    for (const query of [`messages?cursor=${first.json.next_cursor}`, "audit?cursor=MTI", "messages?cursor=%21"]) {
      const res = await call("GET", `${path}/${query}`);
      expect(res.status, query).toBe(400);
      expect(res.json.error.code).toBe("INVALID_CURSOR");
    }
    const messages = await call("GET", `${path}/messages?limit=2`);
    await expectForgedCursorsRefused(`${path}/messages?limit=2`, messages.json.next_cursor);
    await expectForgedCursorsRefused(`${path}/audit?limit=2`, first.json.next_cursor);
    // `after` is held to the same grammar: a position written as the list writes it.
    const record = first.json.items[1].id as string;
    for (const query of [
      "messages?after=%00%ff",
      "messages?after=fg",
      "messages?after=",
      "messages?after=-1",
      "messages?after=1e0",
      "messages?after=01",
      "messages?after=%201",
      "messages?after=0x1",
      "audit?after=%00%ff",
      "audit?after=fg",
      "audit?after=",
      `audit?after=${record.toLowerCase()}`,
      `audit?after=${record}%00`,
      `audit?after=${record.slice(1)}`,
    ]) {
      const res = await call("GET", `${path}/${query}`);
      expect(res.status, query).toBe(400);
      expect(res.json.error.code, query).toBe("INVALID_CURSOR");
      expect(res.json.error.message, query).toMatch(/^`after` must be (a sequence number|an audit record id)/);
    }
  });

  it("deletes a session: 204, then 404 for every call", async () => {
    await registerAgents();
    const { json: session } = await call("POST", "/v1/sessions", { agent: "support" });
    const path = `/v1/sessions/${session.id}`;
    expect((await call("DELETE", path)).status).toBe(204);
    for (const [method, suffix, body] of [
      ["GET", "", undefined],
      ["POST", "/messages", { role: "user", content: "hi" }],
      ["PATCH", "/state", { set: { a: 1 } }],
      ["DELETE", "", undefined],
      ["GET", "/audit", undefined],
    ] as const) {
      const res = await call(method, `${path}${suffix}`, body);
      expect(res.status, `${method} ${suffix}`).toBe(404);
      expect(res.json.error.code).toBe("SESSION_NOT_FOUND");
    }
    const { stub } = sessionStub("alpha", session.id);
    await drainDue(stub);
    const remaining = await call("GET", `/v1/audit?session_id=${session.id}`);
    expect(remaining.json.items.map((r: { action: string }) => r.action)).toEqual([
      "session.deleted",
      "session.created",
    ]);
  });

  it("keeps sessions to their tenant and answers 404 for ids it never made", async () => {
    await registerAgents();
    const { json: session } = await call("POST", "/v1/sessions", { agent: "support" });
    const other = await call("GET", `/v1/sessions/${session.id}`, undefined, { key: BETA_KEY });
    expect(other.status).toBe(404);
    expect(other.json.error.code).toBe("SESSION_NOT_FOUND");
    expect((await call("DELETE", `/v1/sessions/${session.id}`, undefined, { key: BETA_KEY })).status).toBe(404);
    expect((await call("GET", `/v1/sessions/${session.id}`)).status).toBe(200);
    expect((await call("GET", "/v1/sessions/not-a-session-id")).json.error.code).toBe("SESSION_NOT_FOUND");
  });
});
