import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { FlowCheckpoint } from "../../../../durable-objects/session/session-kernel";
import { requestFingerprint } from "../../../../src/handoff/fingerprint";
import type { SessionRpc } from "../../../../src/rpc/session";
import { HandoffRequest } from "../../../../src/schemas/handoff";
import { agentLoadOf, drainDue, registerAgents, sessionStub } from "../../helpers";

/**
 * Crash safety (docs/handoffs.md, Crash safety): a fault thrown at each step of a handoff, then the object is
 * restarted. Afterwards the session is consistent, no lease is leaked or lost, and every
 * transition is in the audit exactly once.
 */

let counter = 0;

async function setup() {
  const n = ++counter;
  const [desk, spec] = await registerAgents(
    "alpha",
    { name: `desk-${n}`, handoffs: [`spec-${n}`], max_concurrent_sessions: 5 },
    { name: `spec-${n}`, max_concurrent_sessions: 1 },
  );
  if (!desk || !spec) throw new Error("agents not registered");
  const { id, stub, rpc } = sessionStub();
  const created = await rpc.create("alpha", id, { agent: desk.name, capacity: 5, metadata: {}, ttl_s: 3600 });
  expect(created.ok).toBe(true);
  const start = () =>
    rpc.startHandoff({
      request: HandoffRequest.parse({
        session_id: id,
        source_agent: desk.name,
        target_agent: spec.name,
        reason: "crash test",
      }),
    });
  const crashAt = (point: FlowCheckpoint) => stub.setFault(point);
  return { id, stub, rpc, desk, spec, start, crashAt };
}

/** The message of the injected crash the test worker reports as an INTERNAL result (test/worker.ts). */
async function failure(
  call: () => Promise<{ ok: boolean; error?: { message: string; details?: unknown } }>,
): Promise<string> {
  const result = await call();
  return !result.ok && (result.error?.details as { fault?: boolean } | undefined)?.fault
    ? result.error!.message
    : "no injected fault";
}

async function leases(agent: string, session: string): Promise<string[]> {
  return (await agentLoadOf("alpha", agent)).leases.filter((l) => l.session_id === session).map((l) => l.state);
}

/** The handoff's audit actions, in order (the session's outbox: every record, flushed or not). */
async function trail(rpc: SessionRpc, handoffId: string): Promise<string[]> {
  const page = await rpc.audit({ limit: 500 });
  if (!page.ok) throw new Error(page.error.message);
  return page.value.records
    .filter((r) => r.handoff_id === handoffId && r.action.startsWith("handoff."))
    .map((r) => r.action);
}

async function handoffIdOf(rpc: SessionRpc): Promise<string> {
  const page = await rpc.audit({ limit: 500 });
  if (!page.ok) throw new Error(page.error.message);
  const id = page.value.records.find((r) => r.action === "handoff.initiated")?.handoff_id;
  if (!id) throw new Error("no handoff on record");
  return id;
}

const ROLLED_BACK = ["handoff.initiated", "handoff.validated", "handoff.transferring", "handoff.rolled_back"];
const COMPLETED = ["handoff.initiated", "handoff.validated", "handoff.transferring", "handoff.completed"];

describe("a crash at each step, then a restart", () => {
  const beforeSwitch: FlowCheckpoint[] = ["after_intent", "after_lease", "before_commit"];
  for (const step of beforeSwitch) {
    it(`${step}: rolled back, source restored, target lease freed, audit complete`, async () => {
      const { id, stub, rpc, desk, spec, start, crashAt } = await setup();
      await crashAt(step);
      expect(await failure(start)).toContain(`injected fault at ${step}`);
      await evictDurableObject(stub);

      const handoffId = await handoffIdOf(rpc);
      const record = await rpc.getHandoff(handoffId);
      expect(record.ok && record.value).toMatchObject({ status: "rolled_back", error: { code: "INTERNAL" } });
      await drainDue(stub);
      const view = await rpc.get();
      expect(view.ok && view.value).toMatchObject({
        current_agent: desk.name,
        handoff_stack: [desk.name],
        in_flight_handoff: null,
        last_handoff_context: null,
      });
      expect(await leases(spec.name, id)).toEqual([]);
      expect(await leases(desk.name, id)).toEqual(["held"]);
      expect(await trail(rpc, handoffId)).toEqual(ROLLED_BACK);
      // The lock is free again: the same handoff now goes through.
      const retry = await start();
      expect(retry.ok && retry.value.handoff.status).toBe("completed");
    });
  }

  it("after_commit: the switch stands; the restart confirms the target's lease and frees the source's", async () => {
    const { id, stub, rpc, desk, spec, start, crashAt } = await setup();
    await crashAt("after_commit");
    expect(await failure(start)).toContain("injected fault at after_commit");
    await evictDurableObject(stub);

    const handoffId = await handoffIdOf(rpc);
    const record = await rpc.getHandoff(handoffId);
    expect(record.ok && record.value.status).toBe("completed");
    await drainDue(stub);
    const view = await rpc.get();
    expect(view.ok && view.value).toMatchObject({
      current_agent: spec.name,
      handoff_stack: [desk.name, spec.name],
      in_flight_handoff: null,
    });
    expect(await leases(spec.name, id)).toEqual(["held"]);
    expect(await leases(desk.name, id)).toEqual([]);
    expect(await trail(rpc, handoffId)).toEqual(COMPLETED);
  });

  it("recovers from the alarm alone: the restarted object schedules its sweep at once", async () => {
    const { id, stub, rpc, desk, spec, start, crashAt } = await setup();
    await crashAt("before_commit");
    expect(await failure(start)).toContain("injected fault");
    await evictDurableObject(stub);
    await drainDue(stub);
    const view = await rpc.get();
    expect(view.ok && view.value).toMatchObject({ current_agent: desk.name, in_flight_handoff: null });
    expect(await leases(spec.name, id)).toEqual([]);
    expect(await trail(rpc, await handoffIdOf(rpc))).toEqual(ROLLED_BACK);
  });

  it("without a restart, the next request recovers the orphan before it takes the lock", async () => {
    const { id, rpc, spec, start, crashAt } = await setup();
    await crashAt("after_lease");
    expect(await failure(start)).toContain("injected fault");
    const next = await start();
    expect(next.ok && next.value.handoff.status).toBe("completed");
    expect(await leases(spec.name, id)).toEqual(["held"]);
    const page = await rpc.audit({ limit: 500 });
    const actions = page.ok ? page.value.records.map((r) => r.action).filter((a) => a.startsWith("handoff.")) : [];
    expect(actions).toEqual([...ROLLED_BACK, ...COMPLETED]);
  });
});

describe("an Idempotency-Key across a crash", () => {
  it("a handoff a restart rolled back is not the key's answer: the client's retry with the key runs afresh", async () => {
    const { id, stub, rpc, desk, spec, crashAt } = await setup();
    const request = HandoffRequest.parse({
      session_id: id,
      source_agent: desk.name,
      target_agent: spec.name,
      reason: "crash test",
    });
    const idempotency = { key: `retry-${id}`, fingerprint: await requestFingerprint(request) };
    await crashAt("after_intent");
    expect(await failure(() => rpc.startHandoff({ request, idempotency }))).toContain("injected fault");
    await evictDurableObject(stub);
    await drainDue(stub);

    const retry = await rpc.startHandoff({ request, idempotency });
    expect(retry.ok && retry.value.handoff.status).toBe("completed");
    expect(await leases(spec.name, id)).toEqual(["held"]);
    // Its answer is kept now: a repeat gets the same handoff and changes nothing.
    const repeat = await rpc.startHandoff({ request, idempotency });
    expect(repeat.ok && repeat.value).toEqual({ handoff: retry.ok && retry.value.handoff, accepted: false });
  });

  it("a refusal on the request's merits stays the key's answer", async () => {
    const { id, rpc, spec } = await setup();
    const request = HandoffRequest.parse({
      session_id: id,
      source_agent: spec.name,
      target_agent: spec.name,
      reason: "x",
    });
    const idempotency = { key: `refused-${id}`, fingerprint: await requestFingerprint(request) };
    const first = await rpc.startHandoff({ request, idempotency });
    const again = await rpc.startHandoff({ request, idempotency });
    expect(!first.ok && first.error.code).toBe("NOT_CURRENT_AGENT");
    expect(again).toEqual(first);
  });
});

describe("a failure while activating the target", () => {
  it("rolls back at once: the switch never happened, the lease is freed, the error is returned", async () => {
    const { id, rpc, desk, spec, start, crashAt } = await setup();
    await crashAt("activate");
    const result = await start();
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toMatchObject({ code: "INTERNAL", details: { status: "rolled_back" } });
    const view = await rpc.get();
    expect(view.ok && view.value).toMatchObject({
      current_agent: desk.name,
      handoff_stack: [desk.name],
      in_flight_handoff: null,
    });
    expect(await leases(spec.name, id)).toEqual([]);
    expect(await leases(desk.name, id)).toEqual(["held"]);
    expect(await trail(rpc, await handoffIdOf(rpc))).toEqual(ROLLED_BACK);
  });
});

describe("a handoff to an agent without a capacity limit", () => {
  async function unlimited() {
    const n = ++counter;
    const [desk, spec] = await registerAgents(
      "alpha",
      { name: `open-desk-${n}`, handoffs: [`open-spec-${n}`] },
      { name: `open-spec-${n}` },
    );
    if (!desk || !spec) throw new Error("agents not registered");
    const { id, stub, rpc } = sessionStub();
    expect((await rpc.create("alpha", id, { agent: desk.name, capacity: null, metadata: {}, ttl_s: 3600 })).ok).toBe(
      true,
    );
    const start = () =>
      rpc.startHandoff({
        request: HandoffRequest.parse({
          session_id: id,
          source_agent: desk.name,
          target_agent: spec.name,
          reason: "one commit",
        }),
      });
    return { stub, rpc, desk, spec, start };
  }

  it("commits all four transitions and the switch in one transaction: a failure inside it leaves no trace", async () => {
    const { stub, rpc, desk, spec, start } = await unlimited();
    await stub.setFault("activate");
    expect(await failure(start)).toBe("injected fault at activate");
    const view = await rpc.get();
    expect(view.ok && view.value).toMatchObject({
      current_agent: desk.name,
      handoff_stack: [desk.name],
      in_flight_handoff: null,
    });
    const page = await rpc.audit({ limit: 500 });
    expect(page.ok && page.value.records.filter((r) => r.action.startsWith("handoff."))).toEqual([]);
    // No lock, no orphan: the next request goes through at once, even after a restart.
    await evictDurableObject(stub);
    const again = await start();
    expect(again.ok && again.value.handoff).toMatchObject({ status: "completed", target: spec.name });
    expect(await trail(rpc, again.ok ? again.value.handoff.id : "")).toEqual(COMPLETED);
  });
});
