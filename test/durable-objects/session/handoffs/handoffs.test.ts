import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { HandoffRequest } from "../../../../src/schemas/handoff";
import { shardOf } from "../../../shards";
import { agentLoadOf, agentStub, d1Audit, drainDue, registerAgents, sessionStub, setClock } from "../../helpers";

let counter = 0;
async function setup(ttl_s = 3600) {
  const n = ++counter;
  const [desk, back] = await registerAgents(
    "alpha",
    { name: `front-${n}`, handoffs: [`back-${n}`], max_concurrent_sessions: 10 },
    { name: `back-${n}`, max_concurrent_sessions: 10 },
  );
  if (!desk || !back) throw new Error("agents not registered");
  const { id, stub, rpc } = sessionStub();
  await rpc.create("alpha", id, { agent: desk.name, capacity: 10, metadata: {}, ttl_s });
  const request = (body: Record<string, unknown>) =>
    HandoffRequest.parse({ session_id: id, source_agent: desk.name, target_agent: back.name, reason: "test", ...body });
  return { id, stub, rpc, desk, back, request };
}

async function leases(agent: string, session: string): Promise<string[]> {
  return (await agentLoadOf("alpha", agent)).leases.filter((l) => l.session_id === session).map((l) => l.state);
}

describe("SessionDO handoffs", () => {
  it("reads its agents from the registry directory; with the registry unreadable it answers 503, takes no lock and records nothing", async () => {
    const { id, rpc, desk, back, request } = await setup();
    expect((await rpc.startHandoff({ request: request({}) })).ok).toBe(true);
    // A registry write moves the version, so the next read goes to D1, which is down.
    await registerAgents("alpha", { name: `bystander-${counter}` });
    const before = await rpc.audit({ limit: 500 });
    await env.DB.exec("ALTER TABLE agents RENAME TO agents_offline");
    let failed: Awaited<ReturnType<typeof rpc.startHandoff>>;
    try {
      failed = await rpc.startHandoff({
        request: request({ source_agent: back.name, target_agent: undefined, mode: "return" }),
      });
    } finally {
      await env.DB.exec("ALTER TABLE agents_offline RENAME TO agents");
    }
    expect(!failed.ok && failed.error.code).toBe("DEPENDENCY_UNAVAILABLE");
    const after = await rpc.audit({ limit: 500 });
    expect(after.ok && after.value.records.length).toBe(before.ok && before.value.records.length);
    expect((await rpc.get()).ok && (await rpc.get())).toMatchObject({
      value: { current_agent: back.name, in_flight_handoff: null },
    });
    const returned = await rpc.startHandoff({
      request: request({ source_agent: back.name, target_agent: undefined, mode: "return" }),
    });
    expect(returned.ok && returned.value.handoff).toMatchObject({ status: "completed", target: desk.name });
    expect(await leases(desk.name, id)).toEqual(["held"]);
    expect(await leases(back.name, id)).toEqual([]);
  });

  it("a session lease that lapsed before it was confirmed is taken again after a restart", async () => {
    const { id, stub, desk } = await setup();
    const [lease] = await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec("UPDATE session_lease SET state = 'tentative'");
      return state.storage.sql.exec("SELECT lease_id FROM session_lease").toArray() as { lease_id: string }[];
    });
    await agentStub("alpha", desk.name).rpc.release({ lease_id: lease!.lease_id });
    expect(await leases(desk.name, id)).toEqual([]);
    await evictDurableObject(stub);
    await drainDue(stub);
    expect(await leases(desk.name, id)).toEqual(["held"]);
    const state = await runInDurableObject(stub, (_instance, s) =>
      s.storage.sql.exec("SELECT state FROM session_lease").one(),
    );
    expect(state).toEqual({ state: "held" });
  });

  it("a session deleted while a handoff runs leaves no lease and nothing in flight", async () => {
    const { id, stub, rpc, desk, back, request } = await setup();
    const [handoff, deleted] = await Promise.all([rpc.startHandoff({ request: request({}) }), rpc.delete()]);
    expect(deleted.ok).toBe(true);
    // Whichever ran first — the delete inside the handoff's await on the AgentDO, or around it.
    expect(handoff.ok ? handoff.value.handoff.status : handoff.error.code).toMatch(/^(completed|SESSION_NOT_FOUND)$/);
    await drainDue(stub);
    expect(await leases(desk.name, id)).toEqual([]);
    expect(await leases(back.name, id)).toEqual([]);
  });

  it("an expiring session cancels its pending handoff and frees its lease", async () => {
    const { id, stub, rpc, desk, request } = await setup(60);
    await rpc.setAgentStatus(desk.name, "busy");
    const pending = await rpc.startHandoff({ request: request({ policy: "graceful", timeout_s: 3600 }) });
    expect(pending.ok && pending.value).toMatchObject({ accepted: true, handoff: { status: "pending" } });
    const view = await rpc.get();
    await setClock(stub, Date.parse(view.ok ? view.value.expires_at : "") + 1);
    await drainDue(stub);
    expect((await d1Audit(id)).map((r) => r.action)).toEqual([
      "session.created",
      "session.agent_status_changed",
      "handoff.initiated",
      "handoff.validated",
      "handoff.pending",
      "handoff.cancelled",
      "session.expired",
    ]);
    expect(await leases(desk.name, id)).toEqual([]);
    const index = await (await shardOf("alpha"))
      .prepare("SELECT status FROM handoffs WHERE session_id = ?1")
      .bind(id)
      .first();
    expect(index).toEqual({ status: "cancelled" });
  });
});
