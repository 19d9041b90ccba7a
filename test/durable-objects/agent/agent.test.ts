import { evictDurableObject, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { agentStub, setClock, timersOf } from "../helpers";

const FUTURE = Date.now() + 3_600_000;
const TTL = 30_000;
let counter = 0;
/** A fresh agent object per test: storage is shared by the whole file. */
const freshAgent = () => agentStub("alpha", `agent-${++counter}`);

function value<T>(result: { ok: true; value: T } | { ok: false; error: { code: string; message: string } }): T {
  if (!result.ok) throw new Error(`${result.error.code}: ${result.error.message}`);
  return result.value;
}

describe("AgentDO leases", () => {
  it("grants up to the capacity and refuses the next with AGENT_UNAVAILABLE", async () => {
    const { rpc } = freshAgent();
    value(await rpc.acquire("s1", "h1", TTL, 2));
    value(await rpc.acquire("s2", "h2", TTL, 2));
    const third = await rpc.acquire("s3", "h3", TTL, 2);
    expect(third).toMatchObject({
      ok: false,
      error: { code: "AGENT_UNAVAILABLE", details: { reason: "at_capacity", active: 2, capacity: 2 } },
    });
    expect(value(await rpc.load())).toMatchObject({ status: "active", max_concurrent_sessions: 2, active_leases: 2 });
  });

  it("is idempotent for the same session and handoff; a new handoff of the same session takes the lease over", async () => {
    const { rpc } = freshAgent();
    const first = value(await rpc.acquire("s1", "h1", TTL, 1));
    const again = value(await rpc.acquire("s1", "h1", TTL, 1));
    expect(again).toEqual(first);
    const takeover = value(await rpc.acquire("s1", "h2", TTL, 1));
    expect(takeover.lease_id).toBe(first.lease_id);
    expect(takeover.handoff_id).toBe("h2");
    expect(takeover.fencing_token).toBeGreaterThan(first.fencing_token);
    expect(value(await rpc.load()).active_leases).toBe(1);
  });

  it("confirms a tentative lease (idempotently) and refuses a stale fencing token", async () => {
    const { rpc } = freshAgent();
    const lease = value(await rpc.acquire("s1", "h1", TTL, 5));
    expect(lease).toMatchObject({ state: "tentative", fencing_token: 1 });
    expect(lease.expires_at).not.toBeNull();
    const held = value(await rpc.confirm(lease.lease_id, lease.fencing_token));
    expect(held).toMatchObject({ state: "held", expires_at: null });
    expect(value(await rpc.confirm(lease.lease_id))).toEqual(held);
    const newer = value(await rpc.acquire("s1", "h2", TTL, 5));
    expect(newer.state).toBe("held");
    const stale = await rpc.confirm(lease.lease_id, lease.fencing_token);
    expect(stale).toMatchObject({
      ok: false,
      error: { code: "AGENT_UNAVAILABLE", details: { reason: "stale_fencing_token" } },
    });
  });

  it("lets an unconfirmed lease lapse by timer, freeing the capacity", async () => {
    const { stub, rpc } = freshAgent();
    await setClock(stub, FUTURE);
    const lease = value(await rpc.acquire("s1", "h1", TTL, 1));
    expect((await rpc.acquire("s2", "h2", TTL, 1)).ok).toBe(false);
    const { timers, alarm } = await timersOf(stub);
    expect(timers).toMatchObject([{ kind: "lease.expire", due_at: FUTURE + TTL }]);
    expect(alarm).toBe(FUTURE + TTL);

    await setClock(stub, FUTURE + TTL);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(value(await rpc.load())).toMatchObject({ active_leases: 0, leases: [] });
    expect((await timersOf(stub)).timers).toEqual([]);
    const late = await rpc.confirm(lease.lease_id);
    expect(late).toMatchObject({
      ok: false,
      error: { code: "AGENT_UNAVAILABLE", details: { reason: "lease_not_found" } },
    });
    expect((await rpc.acquire("s2", "h2", TTL, 1)).ok).toBe(true);
  });

  it("does not count a lapsed lease even before its timer has run", async () => {
    const { stub, rpc } = freshAgent();
    await setClock(stub, FUTURE);
    value(await rpc.acquire("s1", "h1", TTL, 1));
    await setClock(stub, FUTURE + TTL + 1);
    expect(value(await rpc.acquire("s2", "h2", TTL, 1)).session_id).toBe("s2");
  });

  it("keeps a held lease past the tentative expiry", async () => {
    const { stub, rpc } = freshAgent();
    await setClock(stub, FUTURE);
    const lease = value(await rpc.acquire("s1", "h1", TTL, 1));
    value(await rpc.confirm(lease.lease_id));
    await setClock(stub, FUTURE + 10 * TTL);
    await runDurableObjectAlarm(stub);
    expect(value(await rpc.load()).leases).toMatchObject([{ lease_id: lease.lease_id, state: "held" }]);
  });

  it("releases by lease or by session, idempotently, and leaves a newer grant alone", async () => {
    const { rpc } = freshAgent();
    const a = value(await rpc.acquire("s1", "h1", TTL, 5));
    value(await rpc.acquire("s2", "h2", TTL, 5));
    expect(value(await rpc.release({ lease_id: a.lease_id }))).toEqual({ released: true });
    expect(value(await rpc.release({ lease_id: a.lease_id }))).toEqual({ released: false });
    expect(value(await rpc.release({ session_id: "s2" }))).toEqual({ released: true });
    const b = value(await rpc.acquire("s3", "h3", TTL, 5));
    const b2 = value(await rpc.acquire("s3", "h4", TTL, 5));
    expect(value(await rpc.release({ session_id: "s3" }, b.fencing_token))).toEqual({ released: false });
    expect(value(await rpc.release({ session_id: "s3" }, b2.fencing_token))).toEqual({ released: true });
    expect(value(await rpc.load()).active_leases).toBe(0);
  });

  it("refuses new sessions while paused but keeps the ones it has", async () => {
    const { rpc } = freshAgent();
    value(await rpc.acquire("s1", "h1", TTL, 5));
    expect(value(await rpc.pause()).status).toBe("paused");
    expect(await rpc.acquire("s2", "h2", TTL, 5)).toMatchObject({
      ok: false,
      error: { code: "AGENT_UNAVAILABLE", details: { reason: "paused" } },
    });
    expect((await rpc.acquire("s1", "h9", TTL, 5)).ok).toBe(true);
    expect(value(await rpc.resume()).status).toBe("active");
    expect((await rpc.acquire("s2", "h2", TTL, 5)).ok).toBe(true);
  });

  it("grants exactly the capacity to concurrent requests", async () => {
    const { rpc } = freshAgent();
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => rpc.acquire(`s${i}`, `h${i}`, TTL, 3)));
    expect(results.filter((r) => r.ok)).toHaveLength(3);
    expect(results.filter((r) => !r.ok && r.error.code === "AGENT_UNAVAILABLE")).toHaveLength(9);
    const tokens = results.flatMap((r) => (r.ok ? [r.value.fencing_token] : []));
    expect(new Set(tokens).size).toBe(3);
  });

  it("refuses a non-positive ttl or capacity", async () => {
    const { rpc } = freshAgent();
    expect(await rpc.acquire("s1", "h1", 0, 1)).toMatchObject({ ok: false, error: { code: "VALIDATION_FAILED" } });
    expect(await rpc.acquire("s1", "h1", TTL, 0)).toMatchObject({ ok: false, error: { code: "VALIDATION_FAILED" } });
  });

  it("keeps status and leases across eviction", async () => {
    const { stub, rpc } = freshAgent();
    const lease = value(await rpc.acquire("s1", "h1", TTL, 5));
    value(await rpc.confirm(lease.lease_id));
    value(await rpc.pause());
    const before = value(await rpc.load());
    await evictDurableObject(stub);
    expect(value(await rpc.load())).toEqual(before);
  });

  it("an agent never used reports an empty load without creating storage", async () => {
    const { rpc } = freshAgent();
    expect(value(await rpc.load())).toEqual({
      status: "active",
      max_concurrent_sessions: null,
      active_leases: 0,
      leases: [],
    });
    expect(value(await rpc.release({ session_id: "nobody" }))).toEqual({ released: false });
  });
});
