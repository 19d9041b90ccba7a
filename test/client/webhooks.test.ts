import { Webhook } from "standardwebhooks";
import { afterAll, describe, expect, it } from "vitest";
import { type EventNotification, unwrap, verifyWebhook, WebhookVerificationError } from "../../client/src/index.ts";
import { webhookHeaders } from "../../src/lib/standard-webhooks.ts";
import { eventually, receiver, runMessage, testClient } from "../cli/run-cli";

/**
 * verifyWebhook against the Standard Webhooks reference library, and against what Relay
 * really sends: its event notifications to a tenant's events URL.
 */

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const OTHER = "whsec_bm9zZWNyZXRzaGVyZWJ1dHRoaXNvbmVpc25ldw==";
const body = JSON.stringify({ type: "handoff.completed", timestamp: "2026-11-24T10:00:00.000Z", data: { id: "x" } });
const at = new Date(1_790_000_000_000);
const now = { nowS: 1_790_000_000 };

function signed(secret = SECRET, id = "msg_1", date = at) {
  const signature = new Webhook(secret).sign(id, date, body);
  return {
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(date.getTime() / 1000)),
    "webhook-signature": signature,
  };
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WebhookVerificationError);
  return (error as WebhookVerificationError).reason;
}

describe("verifyWebhook", () => {
  it("accepts what the reference library signs: id, timestamp and the parsed body", async () => {
    const verified = await verifyWebhook(SECRET, signed(), body, now);
    expect(verified).toEqual({ id: "msg_1", timestamp: 1_790_000_000, payload: JSON.parse(body) });
    // Headers as a Headers object (fetch, Workers) as well as a record (Node's IncomingMessage).
    expect((await verifyWebhook(SECRET, new Headers(signed()), body, now)).id).toBe("msg_1");
  });

  it("any secret of a rotation matches, given as a list or Relay's comma-separated form", async () => {
    expect((await verifyWebhook([OTHER, SECRET], signed(), body, now)).id).toBe("msg_1");
    expect((await verifyWebhook(`${OTHER}, ${SECRET}`, signed(), body, now)).id).toBe("msg_1");
  });

  it("refuses a changed body, another secret, old and future timestamps, missing headers, a bad secret", async () => {
    expect(await refusal(verifyWebhook(SECRET, signed(), `${body} `, now))).toBe("bad_signature");
    expect(await refusal(verifyWebhook(OTHER, signed(), body, now))).toBe("bad_signature");
    expect(await refusal(verifyWebhook(SECRET, signed(), body, { nowS: now.nowS + 301 }))).toBe("stale");
    expect(await refusal(verifyWebhook(SECRET, signed(), body, { nowS: now.nowS - 301 }))).toBe("future");
    expect(await refusal(verifyWebhook(SECRET, { ...signed(), "webhook-id": "" }, body, now))).toBe("missing_headers");
    expect(await refusal(verifyWebhook(SECRET, { ...signed(), "webhook-timestamp": "soon" }, body, now))).toBe(
      "invalid_timestamp",
    );
    expect(await refusal(verifyWebhook("whsec_!!!", signed(), body, now))).toBe("invalid_secret");
    // A changed id is another message.
    expect(await refusal(verifyWebhook(SECRET, { ...signed(), "webhook-id": "msg_2" }, body, now))).toBe(
      "bad_signature",
    );
  });

  it("with tenant and target given, refuses a delivery whose signed body names others", async () => {
    const addressed = JSON.stringify({ type: "agent.turn", tenant: "acme", target: "agent:billing", data: {} });
    const headers = {
      "webhook-id": "msg_9",
      "webhook-timestamp": String(now.nowS),
      "webhook-signature": new Webhook(SECRET).sign("msg_9", at, addressed),
    };
    const mine = { ...now, tenant: "acme", target: "agent:billing" };
    expect((await verifyWebhook(SECRET, headers, addressed, mine)).payload).toMatchObject({ tenant: "acme" });
    expect(await refusal(verifyWebhook(SECRET, headers, addressed, { ...mine, tenant: "dev" }))).toBe("wrong_tenant");
    expect(await refusal(verifyWebhook(SECRET, headers, addressed, { ...mine, target: "agent:sales" }))).toBe(
      "wrong_target",
    );
    // A body naming nobody is refused when a receiver expects someone.
    expect(await refusal(verifyWebhook(SECRET, signed(), body, { ...now, tenant: "acme" }))).toBe("wrong_tenant");
  });
});

describe("verifyWebhook on what Relay's signer writes", () => {
  it("accepts the server's signed headers, and refuses them on a tampered body, id or timestamp", async () => {
    const headers = await webhookHeaders([OTHER, SECRET], "msg_5", now.nowS, body);
    expect(await verifyWebhook(SECRET, headers, body, now)).toEqual({
      id: "msg_5",
      timestamp: now.nowS,
      payload: JSON.parse(body),
    });
    expect(await refusal(verifyWebhook(SECRET, headers, body.replace("x", "y"), now))).toBe("bad_signature");
    expect(await refusal(verifyWebhook(SECRET, { ...headers, "webhook-id": "msg_6" }, body, now))).toBe(
      "bad_signature",
    );
    const later = String(now.nowS + 1);
    expect(await refusal(verifyWebhook(SECRET, { ...headers, "webhook-timestamp": later }, body, now))).toBe(
      "bad_signature",
    );
  });

  it("reads Node's headers record, where a repeated header is a list", async () => {
    const [first, second] = (await webhookHeaders([OTHER, SECRET], "msg_7", now.nowS, body))["webhook-signature"].split(
      " ",
    );
    const node = {
      "Webhook-Id": "msg_7",
      "webhook-timestamp": String(now.nowS),
      "webhook-signature": [first!, second!],
    };
    expect((await verifyWebhook(SECRET, node, body, now)).id).toBe("msg_7");
  });
});

describe("verifyWebhook on Relay's own deliveries", () => {
  const client = testClient();
  const EVENTS_PORT = 8856;
  let events: Awaited<ReturnType<typeof receiver>> | undefined;

  afterAll(async () => {
    await client.api.DELETE("/v1/config/events");
    await events?.close();
  });

  it("verifies every event notification Relay sends, signed with the subscription's secret", async () => {
    events = await receiver(EVENTS_PORT);
    const subscription = await unwrap(
      client.api.PUT("/v1/config/events", { body: { url: `${events.url}/relay-events`, types: ["run.*"] } }),
    );
    const session = await unwrap(client.api.POST("/v1/sessions", { body: { agent: "billing" } }));
    const { run } = await runMessage(client, session.id, "refund please");

    // Delivered by the session's alarm, after the commit.
    const deliveries = await eventually(async () => {
      const mine = events!.received.filter((r) => r.body.includes(run.id));
      return mine.some((r) => r.body.includes('"run.completed"')) ? mine : undefined;
    });
    for (const delivery of deliveries) {
      const verified = await verifyWebhook<EventNotification>(
        subscription.secret,
        delivery.headers as Record<string, string>,
        delivery.body,
        { tenant: "dev", target: "events" },
      );
      expect(verified.payload.type).toMatch(/^run\./);
      expect(verified.payload.data.session_id).toBe(session.id);
      expect(verified.id).toBe(verified.payload.data.id);
    }
    const [first] = deliveries;
    const tampered = first!.body.replace('"dev"', '"acme"');
    expect(tampered).not.toBe(first!.body);
    expect(await refusal(verifyWebhook(subscription.secret, first!.headers as Record<string, string>, tampered))).toBe(
      "bad_signature",
    );
    const other = (await unwrap(client.api.GET("/v1/config/signing-secret"))).secret;
    expect(
      await refusal(verifyWebhook(other, deliveries[0]!.headers as Record<string, string>, deliveries[0]!.body)),
    ).toBe("bad_signature");
  });
});
