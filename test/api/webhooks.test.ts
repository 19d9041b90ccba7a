import { env, exports } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { beforeAll, describe, expect, it } from "vitest";
import { shardObjectName } from "../../src/handoff/capacity-shards";
import { agentRpc, agentRpcByName } from "../../src/rpc/stubs";
import { eventually } from "../eventually";
import { shardOf } from "../shards";
import { call } from "./helpers";

/**
 * Webhooks in (docs/webhooks.md): `POST /v1/webhooks/:source`. Deliveries are signed with the
 * `standardwebhooks` reference package — the signer a real sender uses — never with
 * Relay's own code, so verification is checked against a client nobody on the team wrote.
 */

const CRM_SECRET = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
const DESK_OLD = "whsec_Kp8wqd1MxVOA0F3kJq2XbQz6YH3lQm1S";
const DESK_NEW = "whsec_bm9zZWNyZXRzaGVyZWJ1dHRoaXNvbmVpc25ldw==";

beforeAll(async () => {
  for (const agent of [
    {
      name: "desk",
      description: "Desk",
      handoffs: ["billing", { to: "ops", when: "auto", trigger: { type: "event", event: "outage" } }],
    },
    { name: "billing", description: "Billing" },
    { name: "ops", description: "Ops" },
  ]) {
    const res = await call("PUT", `/v1/agents/${agent.name}`, agent);
    if (res.status >= 300) throw new Error(JSON.stringify(res.json));
  }
});

let seq = 0;

/**
 * A delivery signed by the reference package: `at` seconds from now, `secret`, and a body that may be
 * tampered with after signing.
 */
function delivery(
  payload: unknown,
  {
    secret = CRM_SECRET,
    at = 0,
    id = `msg_test_${++seq}_${Date.now()}`,
    tamper,
  }: { secret?: string; at?: number; id?: string; tamper?: (body: string) => string } = {},
) {
  const body = JSON.stringify(payload);
  const timestamp = new Date(Date.now() + at * 1000);
  const signature = new Webhook(secret).sign(id, timestamp, body);
  return {
    id,
    body: tamper ? tamper(body) : body,
    headers: {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
      "webhook-signature": signature,
    },
  };
}

async function post(source: string, d: { body: string; headers: Record<string, string> }) {
  const response = await (exports as unknown as { default: Fetcher }).default.fetch(
    `http://relay.test/v1/webhooks/${source}`,
    { method: "POST", headers: d.headers, body: d.body },
  );
  return { status: response.status, json: (await response.json()) as any };
}

async function session(): Promise<string> {
  return (await call("POST", "/v1/sessions", { agent: "desk" })).json.id;
}

/** `webhook.rejected` records in D1, newest last. */
async function rejections(tenant: string) {
  const { results } = await (await shardOf(tenant))
    .prepare(
      "SELECT details, actor, actor_type FROM audit_log WHERE tenant = ?1 AND action = 'webhook.rejected' ORDER BY id",
    )
    .bind(tenant)
    .all<{ details: string; actor: string; actor_type: string }>();
  return results.map((r) => ({ ...r, details: JSON.parse(r.details) }));
}

/** Polls `read` until `done` holds: refusal counts reach D1 about a second after the refusals. */
const until = <T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> =>
  eventually(read, done, { timeout: 20_000, what: "the refusal counts in D1" });

const handoffCount = async (id: string) =>
  (await call("GET", `/v1/sessions/${id}/audit?limit=200`)).json.items.filter(
    (r: { action: string }) => r.action === "handoff.initiated",
  ).length;

describe("verification", () => {
  it("a valid delivery hands off, as the webhook source", async () => {
    const id = await session();
    const res = await post(
      "crm",
      delivery({
        type: "handoff.requested",
        data: { session_id: id, target_agent: "billing", reason: "the CRM says it is a billing case" },
      }),
    );
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      type: "handoff.requested",
      handoff: { status: "completed", source: "desk", target: "billing" },
    });
    expect((await call("GET", `/v1/sessions/${id}`)).json.current_agent).toBe("billing");
    const started = (await call("GET", `/v1/sessions/${id}/audit?limit=200`)).json.items.find(
      (r: { action: string }) => r.action === "handoff.initiated",
    );
    expect(started).toMatchObject({ actor: "webhook:crm", actor_type: "webhook" });
  });

  it("refuses a tampered body, a wrong secret, stale and future timestamps (401), each counted, nothing changed", async () => {
    const id = await session();
    const payload = { type: "handoff.requested", data: { session_id: id, target_agent: "billing", reason: "r" } };
    const cases: [string, ReturnType<typeof delivery>][] = [
      ["bad_signature", delivery(payload, { tamper: (b) => b.replace("billing", "ops") })],
      ["bad_signature", delivery(payload, { secret: "whsec_d3JvbmctYnV0LXdlbGwtZm9ybWVkLXNlY3JldA==" })],
      ["stale", delivery(payload, { at: -301 })],
      // 302, not 301: both sides floor to whole seconds and the server reads its clock a moment
      // later, so a timestamp 301 s ahead can be 300 s ahead there, inside the tolerance.
      ["future", delivery(payload, { at: 302 })],
    ];
    for (const [reason, d] of cases) {
      const res = await post("crm", d);
      expect(res.status, reason).toBe(401);
      expect(res.json.error, reason).toMatchObject({ code: "WEBHOOK_REJECTED", details: { reason } });
    }
    const missing = await post("crm", {
      body: JSON.stringify(payload),
      headers: { "content-type": "application/json" },
    });
    expect(missing.json.error.details.reason).toBe("missing_headers");
    expect((await call("GET", `/v1/sessions/${id}`)).json.current_agent).toBe("desk");
    // Counted per reason (the isolate flushes its counts about a second later), sampled once a minute.
    const counted = await until(
      async () => (await call("GET", "/v1/webhooks/stats")).json.sources.find((s: any) => s.source === "crm"),
      (s) => s?.rejected >= 5,
    );
    expect(counted.by_reason).toMatchObject({ bad_signature: 2, stale: 1, future: 1, missing_headers: 1 });
    const sampled = await rejections("alpha");
    expect(sampled.length).toBeGreaterThanOrEqual(1);
    expect(sampled.length).toBeLessThanOrEqual(2);
    expect(sampled[0]).toMatchObject({ actor: "webhook:crm", actor_type: "webhook", details: { sample: true } });
  });

  it("accepts either secret while one is being rotated", async () => {
    for (const secret of [DESK_OLD, DESK_NEW]) {
      const id = await session();
      const res = await post(
        "desk",
        delivery(
          { type: "handoff.requested", data: { session_id: id, target_agent: "billing", reason: "rotation" } },
          { secret },
        ),
      );
      expect(res.status).toBe(200);
    }
  });

  it("an unknown source is 404, counted apart from every tenant", async () => {
    const res = await post("nobody", delivery({ type: "session.event", data: { session_id: "x", name: "y" } }));
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe("WEBHOOK_SOURCE_NOT_FOUND");
    await until(
      async () =>
        (await shardOf("_webhooks"))
          .prepare("SELECT count FROM webhook_rejections WHERE tenant = '_webhooks'")
          .first<number>("count"),
      (count) => count === 1,
    );
    expect((await rejections("_webhooks")).at(-1)!.details).toMatchObject({
      source: "nobody",
      reason: "unknown_source",
    });
  });

  it("a bad payload is 400, recorded; an oversize body is 413", async () => {
    const bad = delivery({ type: "handoff.requested", data: { reason: "no session" } });
    const res = await post("crm", bad);
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("VALIDATION_FAILED");
    expect((await rejections("alpha")).at(-1)!.details).toMatchObject({
      reason: "invalid_payload",
      webhook_id: bad.id,
    });
    // The same delivery again gets the same answer.
    expect(await post("crm", bad)).toEqual(res);
    const huge = delivery({
      type: "session.event",
      data: { session_id: "x", name: "y", data: "z".repeat(300 * 1024) },
    });
    expect((await post("crm", huge)).status).toBe(413);
  });
});

describe("each delivery once", () => {
  it("a repeated webhook-id returns the first answer and does nothing again", async () => {
    const id = await session();
    const d = delivery({
      type: "handoff.requested",
      data: { session_id: id, target_agent: "billing", reason: "once" },
    });
    const first = await post("crm", d);
    const again = await post("crm", d);
    expect(again).toEqual(first);
    expect(await handoffCount(id)).toBe(1);
  });

  it("50 identical deliveries in parallel hand off once, and all get the same answer", async () => {
    const id = await session();
    const d = delivery({
      type: "handoff.requested",
      data: { session_id: id, target_agent: "billing", reason: "burst" },
    });
    const answers = await Promise.all(Array.from({ length: 50 }, () => post("crm", d)));
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0]!.status).toBe(200);
    expect(await handoffCount(id)).toBe(1);
  });
});

describe("payload types", () => {
  it("session.event feeds event triggers", async () => {
    const id = await session();
    const res = await post(
      "crm",
      delivery({ type: "session.event", data: { session_id: id, name: "outage", data: { region: "eu" } } }),
    );
    expect(res.json).toMatchObject({ type: "session.event", queued: false, handoff: { target: "ops" } });
    expect((await call("GET", `/v1/sessions/${id}`)).json.current_agent).toBe("ops");
  });

  it("agent.status sets an agent's turn status in a session, or pauses and resumes the agent", async () => {
    const id = await session();
    const busy = await post(
      "crm",
      delivery({ type: "agent.status", data: { agent: "desk", status: "busy", session_id: id } }),
    );
    expect(busy.status).toBe(200);
    expect((await call("GET", `/v1/sessions/${id}`)).json.agent_status).toMatchObject({ desk: "busy" });
    const paused = await post("crm", delivery({ type: "agent.status", data: { agent: "billing", status: "paused" } }));
    expect(paused.json).toMatchObject({ type: "agent.status", agent: "billing", load: { status: "paused" } });
    const load = await agentRpc(env, "alpha", "billing").load();
    expect(load.ok && load.value.status).toBe("paused");
    await post("crm", delivery({ type: "agent.status", data: { agent: "billing", status: "active" } }));
    const after = await agentRpc(env, "alpha", "billing").load();
    expect(after.ok && after.value.status).toBe("active");
    const unknown = await post("crm", delivery({ type: "agent.status", data: { agent: "ghost", status: "paused" } }));
    expect(unknown.status).toBe(404);
  });

  it("agent.status pauses and resumes every capacity shard of a hot agent", async () => {
    expect(
      (await call("PUT", "/v1/agents/hot", { name: "hot", description: "Hot", max_concurrent_sessions: 1000 })).status,
    ).toBeLessThan(300);
    const shards = () =>
      Promise.all(
        [0, 1, 2, 3].map(async (i) => agentRpcByName(env, shardObjectName("alpha", "hot", i, 4), `hot ${i}`).load()),
      );
    const paused = await post("crm", delivery({ type: "agent.status", data: { agent: "hot", status: "paused" } }));
    expect(paused.json).toMatchObject({
      type: "agent.status",
      agent: "hot",
      load: { status: "paused", active_leases: 0 },
    });
    expect((await shards()).map((l) => l.ok && l.value.status)).toEqual(["paused", "paused", "paused", "paused"]);
    const refused = await call("POST", "/v1/sessions", { agent: "hot" });
    expect(refused.status).toBe(422);
    expect(refused.json.error).toMatchObject({ code: "AGENT_UNAVAILABLE", details: { reason: "paused" } });
    await post("crm", delivery({ type: "agent.status", data: { agent: "hot", status: "active" } }));
    expect((await shards()).map((l) => l.ok && l.value.status)).toEqual(["active", "active", "active", "active"]);
    expect((await call("POST", "/v1/sessions", { agent: "hot" })).status).toBe(201);
  });
});
