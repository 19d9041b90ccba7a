import { runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { advanceClock, drainDue, sessionStub, setClock } from "../durable-objects/helpers";
import { llmServer } from "../fakes/server";
import { fakeWebhookAgent, replyText, type WebhookDelivery } from "../fakes/webhook-agent";
import { call } from "./helpers";

/**
 * Webhooks out (docs/webhooks.md): the tenant's events_url gets every handoff and run lifecycle
 * record, signed — checked by a receiver that verifies with the `standardwebhooks`
 * reference package — at least once under a stable webhook-id, retried by the session's
 * alarm, and recorded when given up.
 */

const URL = "https://receiver.test/relay-events";

beforeAll(async () => {
  for (const agent of [
    { name: "desk", description: "Desk", handoffs: ["billing"] },
    { name: "billing", description: "Billing" },
  ]) {
    await call("PUT", `/v1/agents/${agent.name}`, agent);
  }
});

/** A receiver holding the subscription's secret; `fail` answers 500 that many times first. */
function receiver(secret: string, fail = 0) {
  let failures = fail;
  const fake = fakeWebhookAgent({
    url: URL,
    secret,
    respond: () => (failures-- > 0 ? replyText("down", 500) : replyText("", 204)),
  });
  llmServer.use(fake.handler);
  return fake;
}

async function handoff(): Promise<string> {
  const id = (await call("POST", "/v1/sessions", { agent: "desk" })).json.id;
  const res = await call("POST", "/v1/handoffs", {
    session_id: id,
    source_agent: "desk",
    target_agent: "billing",
    reason: "billing question",
  });
  expect(res.status).toBe(200);
  return id;
}

const typesOf = (deliveries: WebhookDelivery[]) => deliveries.map((d) => (d.body as { type: string }).type);

describe("the events subscription", () => {
  it("PUT makes a signing secret and keeps it on replacement; GET shows it; DELETE removes it; a bad url is 400", async () => {
    expect((await call("GET", "/v1/config/events")).status).toBe(404);
    const created = await call("PUT", "/v1/config/events", { url: URL });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ url: URL, types: [], secret: expect.stringMatching(/^whsec_/) });
    const replaced = await call("PUT", "/v1/config/events", { url: URL, types: ["run.*"] });
    expect(replaced.status).toBe(200);
    expect(replaced.json.secret).toBe(created.json.secret);
    expect((await call("GET", "/v1/config/events")).json.types).toEqual(["run.*"]);
    expect((await call("PUT", "/v1/config/events", { url: "ftp://x" })).status).toBe(400);
    expect((await call("PUT", "/v1/config/events", { url: URL, types: ["session.created"] })).status).toBe(400);
    expect((await call("DELETE", "/v1/config/events")).status).toBe(204);
    expect((await call("DELETE", "/v1/config/events")).status).toBe(404);
  });
});

describe("deliveries", () => {
  it("a handoff's lifecycle reaches the receiver signed; a receiver that fails twice gets each one again, same webhook-id, until it answers", async () => {
    const { secret } = (await call("PUT", "/v1/config/events", { url: URL })).json;
    const fake = receiver(secret, 2);
    const id = await handoff();
    const { stub } = sessionStub("alpha", id);
    await drainDue(stub);
    const first = fake.deliveries.length;
    expect(first).toBeGreaterThan(0);
    await advanceClock(stub, 5_000);
    await drainDue(stub);
    await advanceClock(stub, 30_000);
    await drainDue(stub);
    expect(fake.deliveries.every((d) => d.verified === true)).toBe(true);
    // Every lifecycle record arrived, and the receiver acknowledged each webhook-id once at least.
    const audit = (await call("GET", `/v1/sessions/${id}/audit?limit=200`)).json.items.filter((r: { action: string }) =>
      r.action.startsWith("handoff."),
    );
    const ids = new Set(fake.deliveries.map((d) => d.headers["webhook-id"]));
    expect([...ids].sort()).toEqual(audit.map((r: { id: string }) => r.id).sort());
    expect(typesOf(fake.deliveries)).toContain("handoff.completed");
    // The two failures were retried under the same ids.
    const perId = new Map<string, number>();
    for (const d of fake.deliveries)
      perId.set(d.headers["webhook-id"]!, (perId.get(d.headers["webhook-id"]!) ?? 0) + 1);
    expect([...perId.values()].some((n) => n > 1)).toBe(true);
    const completed = fake.deliveries.find((d) => (d.body as { type: string }).type === "handoff.completed")!;
    expect(completed.body).toMatchObject({
      type: "handoff.completed",
      tenant: "alpha",
      target: "events",
      data: { session_id: id, actor: "api" },
    });
    const count = fake.deliveries.length;
    await advanceClock(stub, 3_600_000);
    await drainDue(stub);
    expect(fake.deliveries.length).toBe(count);
  });

  it("a receiver that never answers: each retry on its backoff, then given up and recorded as webhook.delivery_failed", async () => {
    const { secret } = (await call("PUT", "/v1/config/events", { url: URL, types: ["handoff.completed"] })).json;
    const fake = receiver(secret, 1_000);
    const id = await handoff();
    const { stub } = sessionStub("alpha", id);
    await drainDue(stub);
    for (const delay of [5_000, 30_000, 120_000, 600_000, 3_600_000]) {
      await advanceClock(stub, delay);
      await drainDue(stub);
    }
    // Only the subscribed type, six attempts, one id.
    expect(new Set(typesOf(fake.deliveries))).toEqual(new Set(["handoff.completed"]));
    expect(fake.deliveries).toHaveLength(6);
    expect(new Set(fake.deliveries.map((d) => d.headers["webhook-id"])).size).toBe(1);
    const failed = (await call("GET", `/v1/sessions/${id}/audit?limit=200`)).json.items.find(
      (r: { action: string }) => r.action === "webhook.delivery_failed",
    );
    expect(failed).toMatchObject({
      actor_type: "system",
      details: {
        type: "handoff.completed",
        attempts: 6,
        last_error: "HTTP 500",
        webhook_id: fake.deliveries[0]!.headers["webhook-id"],
      },
    });
    await advanceClock(stub, 3_600_000);
    await drainDue(stub);
    expect(fake.deliveries).toHaveLength(6);
  });

  it("a tenant without an events_url queues nothing; once it sets one, its sessions queue from the next record on", async () => {
    await call("DELETE", "/v1/config/events");
    const { id: before, stub, rpc } = sessionStub();
    // The object's clock an hour ahead: a delivery run it schedules is not due while the test reads.
    await setClock(stub, Date.now() + 3_600_000);
    await rpc.create("alpha", before, { agent: "desk", capacity: null, metadata: {}, ttl_s: 3600 });
    expect(
      (
        await call("POST", "/v1/handoffs", {
          session_id: before,
          source_agent: "desk",
          target_agent: "billing",
          reason: "no subscription",
        })
      ).status,
    ).toBe(200);
    const queued = (id: string) =>
      runInDurableObject(sessionStub("alpha", id).stub, (_instance, state) => ({
        // A session with nothing to deliver has not made its deliveries table.
        rows: state.storage.sql.exec("SELECT 1 FROM sqlite_master WHERE name = 'deliveries'").toArray().length
          ? (state.storage.sql.exec("SELECT COUNT(*) AS n FROM deliveries").one() as { n: number }).n
          : 0,
        timer: state.storage.sql.exec("SELECT 1 FROM timers WHERE kind = 'events.deliver'").toArray().length,
      }));
    expect(await queued(before)).toEqual({ rows: 0, timer: 0 });
    const { secret } = (await call("PUT", "/v1/config/events", { url: URL, types: ["handoff.completed"] })).json;
    const fake = receiver(secret);
    const after = await handoff();
    await drainDue(sessionStub("alpha", after).stub);
    expect(fake.deliveries.map((d) => (d.body as { data: { session_id: string } }).data.session_id)).toEqual([after]);
  });

  it("run lifecycle records go out too", async () => {
    const { secret } = (await call("PUT", "/v1/config/events", { url: URL, types: ["run.*"] })).json;
    const fake = receiver(secret);
    const id = (await call("POST", "/v1/sessions", { agent: "desk" })).json.id;
    // The local provider answers offline (no model configured for this tenant).
    const res = await call("POST", `/v1/sessions/${id}/messages`, { role: "user", content: "hello" });
    expect(res.json.run.status).toBe("completed");
    await drainDue(sessionStub("alpha", id).stub);
    expect(typesOf(fake.deliveries)).toEqual(["run.started", "run.completed"]);
    expect(fake.deliveries.every((d) => d.verified)).toBe(true);
  });
});
