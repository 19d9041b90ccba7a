import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import {
  decodeWebhookSecret,
  isWebhookSecret,
  signWebhook,
  verifyWebhook,
  type WebhookHeaders,
  webhookHeaders,
} from "../../src/lib/standard-webhooks";
import { newWebhookSecret } from "../fakes/webhook-agent";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const OTHER = "whsec_2aQmKp3Lw8o3tCqyYv4ZbK1X9mR5nHcE";
const ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const NOW = 1_767_225_600;
const BODY = '{"type":"agent.turn","data":{"text":"I was charged twice — ça arrive"}}';

const nowSeconds = () => Math.floor(Date.now() / 1000);

describe("signWebhook", () => {
  it("signs exactly like the standardwebhooks package, with and without the whsec_ prefix", async () => {
    const expected = new Webhook(SECRET).sign(ID, new Date(NOW * 1000), BODY);
    expect(await signWebhook(SECRET, ID, NOW, BODY)).toBe(expected);
    expect(await signWebhook(SECRET.slice("whsec_".length), ID, NOW, BODY)).toBe(expected);
    expect(expected).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
  });

  it("agrees with the package on random secrets and bodies", async () => {
    for (let i = 0; i < 5; i++) {
      const secret = newWebhookSecret();
      const body = JSON.stringify({ n: i, text: "é".repeat(i * 7), at: Math.random() });
      expect(await signWebhook(secret, `msg_${i}`, NOW + i, body)).toBe(
        new Webhook(secret).sign(`msg_${i}`, new Date((NOW + i) * 1000), body),
      );
    }
  });

  it("refuses a secret that is not base64 with a TypeError", async () => {
    await expect(signWebhook("whsec_not base64!", ID, NOW, BODY)).rejects.toThrow(TypeError);
  });
});

describe("webhookHeaders", () => {
  it("builds the three headers, which the package verifies", async () => {
    const now = nowSeconds();
    const headers = await webhookHeaders(SECRET, ID, now, BODY);
    expect(headers["webhook-id"]).toBe(ID);
    expect(headers["webhook-timestamp"]).toBe(String(now));
    expect(new Webhook(SECRET).verify(BODY, { ...headers })).toEqual(JSON.parse(BODY));
  });

  it("signs once per secret, space-separated, so a receiver holding either verifies", async () => {
    const headers = await webhookHeaders([SECRET, OTHER], ID, nowSeconds(), BODY);
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    expect(new Webhook(SECRET).verify(BODY, { ...headers })).toEqual(JSON.parse(BODY));
    expect(new Webhook(OTHER).verify(BODY, { ...headers })).toEqual(JSON.parse(BODY));
    expect(() => new Webhook(newWebhookSecret()).verify(BODY, { ...headers })).toThrow(/No matching signature/);
  });

  it("needs at least one secret", async () => {
    await expect(webhookHeaders([], ID, NOW, BODY)).rejects.toThrow(TypeError);
  });
});

describe("verifyWebhook", () => {
  const signed = async (secret = SECRET, body = BODY, timestamp = NOW): Promise<WebhookHeaders> =>
    webhookHeaders(secret, ID, timestamp, body);

  it("accepts a valid delivery and returns its id and timestamp", async () => {
    expect(await verifyWebhook([SECRET], await signed(), BODY, NOW)).toEqual({ ok: true, id: ID, timestamp: NOW });
  });

  it("accepts what the package signed", async () => {
    const signature = new Webhook(SECRET).sign(ID, new Date(NOW * 1000), BODY);
    const headers = { "webhook-id": ID, "webhook-timestamp": String(NOW), "webhook-signature": signature };
    expect((await verifyWebhook([SECRET], headers, BODY, NOW)).ok).toBe(true);
  });

  it("accepts a secret given without the whsec_ prefix", async () => {
    expect((await verifyWebhook([SECRET.slice(6)], await signed(), BODY, NOW)).ok).toBe(true);
  });

  it("refuses a tampered body", async () => {
    const tampered = BODY.replace("twice", "thrice");
    expect(await verifyWebhook([SECRET], await signed(), tampered, NOW)).toEqual({
      ok: false,
      reason: "bad_signature",
    });
  });

  it("refuses a tampered id or timestamp (both are signed)", async () => {
    const headers = await signed();
    expect(await verifyWebhook([SECRET], { ...headers, "webhook-id": "msg_other" }, BODY, NOW)).toEqual({
      ok: false,
      reason: "bad_signature",
    });
    expect(await verifyWebhook([SECRET], { ...headers, "webhook-timestamp": String(NOW + 1) }, BODY, NOW)).toEqual({
      ok: false,
      reason: "bad_signature",
    });
  });

  it("refuses a delivery signed with another secret", async () => {
    expect(await verifyWebhook([SECRET], await signed(OTHER), BODY, NOW)).toEqual({
      ok: false,
      reason: "bad_signature",
    });
  });

  it("accepts any of several secrets (rotation): the second one matching is enough", async () => {
    expect((await verifyWebhook([SECRET, OTHER], await signed(OTHER), BODY, NOW)).ok).toBe(true);
    expect((await verifyWebhook([OTHER, SECRET], await signed(OTHER), BODY, NOW)).ok).toBe(true);
  });

  it("accepts a header of several signatures when any one matches, ignoring other versions", async () => {
    const good = (await signed())["webhook-signature"];
    const wrong = (await signed(OTHER))["webhook-signature"];
    const digest = good.slice(3);
    const headers = (signature: string) => ({
      "webhook-id": ID,
      "webhook-timestamp": String(NOW),
      "webhook-signature": signature,
    });
    expect((await verifyWebhook([SECRET], headers(`${wrong} ${good}`), BODY, NOW)).ok).toBe(true);
    expect((await verifyWebhook([SECRET], headers(`v1,short ${good} v1a,xyz`), BODY, NOW)).ok).toBe(true);
    // The right digest under an unknown version is not a v1 signature.
    expect(await verifyWebhook([SECRET], headers(`v2,${digest} ${wrong}`), BODY, NOW)).toEqual({
      ok: false,
      reason: "bad_signature",
    });
    expect(await verifyWebhook([SECRET], headers(digest), BODY, NOW)).toEqual({ ok: false, reason: "bad_signature" });
  });

  it("refuses a stale timestamp beyond the tolerance, and accepts it at the limit", async () => {
    const headers = await signed();
    expect((await verifyWebhook([SECRET], headers, BODY, NOW + 300)).ok).toBe(true);
    expect(await verifyWebhook([SECRET], headers, BODY, NOW + 301)).toEqual({ ok: false, reason: "stale" });
  });

  it("refuses a timestamp from the future beyond the tolerance, and accepts it at the limit", async () => {
    const headers = await signed();
    expect((await verifyWebhook([SECRET], headers, BODY, NOW - 300)).ok).toBe(true);
    expect(await verifyWebhook([SECRET], headers, BODY, NOW - 301)).toEqual({ ok: false, reason: "future" });
  });

  it("honours a custom tolerance", async () => {
    const headers = await signed();
    expect(await verifyWebhook([SECRET], headers, BODY, NOW + 31, 30)).toEqual({ ok: false, reason: "stale" });
    expect((await verifyWebhook([SECRET], headers, BODY, NOW + 30, 30)).ok).toBe(true);
  });

  it("checks the timestamp before the signature: an old replay is stale even when correctly signed", async () => {
    expect(await verifyWebhook([SECRET], await signed(SECRET, BODY, NOW - 3600), BODY, NOW)).toEqual({
      ok: false,
      reason: "stale",
    });
  });

  it("refuses a delivery missing any of the three headers, or with one empty", async () => {
    const headers = await signed();
    for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature"] as const) {
      const { [name]: _dropped, ...rest } = headers;
      expect(await verifyWebhook([SECRET], rest, BODY, NOW)).toEqual({ ok: false, reason: "missing_headers" });
      expect(await verifyWebhook([SECRET], { ...headers, [name]: "" }, BODY, NOW)).toEqual({
        ok: false,
        reason: "missing_headers",
      });
    }
  });

  it("refuses a timestamp that is not whole seconds", async () => {
    const headers = await signed();
    for (const timestamp of ["soon", "1767225600.5", "-1767225600", "1767225600abc"]) {
      expect(await verifyWebhook([SECRET], { ...headers, "webhook-timestamp": timestamp }, BODY, NOW)).toEqual({
        ok: false,
        reason: "invalid_timestamp",
      });
    }
  });

  it("reads a Headers object and header names in any case", async () => {
    const headers = await signed();
    expect((await verifyWebhook([SECRET], new Headers({ ...headers }), BODY, NOW)).ok).toBe(true);
    const shouting = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect((await verifyWebhook([SECRET], shouting, BODY, NOW)).ok).toBe(true);
  });

  it("reports an unusable secret instead of skipping it, and no secret at all", async () => {
    const headers = await signed();
    expect(await verifyWebhook([SECRET, "whsec_***"], headers, BODY, NOW)).toEqual({
      ok: false,
      reason: "invalid_secret",
    });
    expect(await verifyWebhook([], headers, BODY, NOW)).toEqual({ ok: false, reason: "invalid_secret" });
  });
});

describe("decodeWebhookSecret", () => {
  it("decodes whsec_ + base64 and bare base64 to the same key", () => {
    const key = decodeWebhookSecret("whsec_AAECAwQF");
    expect(key).toEqual(new Uint8Array([0, 1, 2, 3, 4, 5]));
    expect(decodeWebhookSecret("AAECAwQF")).toEqual(key);
  });

  it("refuses text that is not base64, and an empty key", () => {
    for (const secret of ["whsec_not base64!", "my-password", "whsec_", ""]) {
      expect(decodeWebhookSecret(secret)).toBeNull();
      expect(isWebhookSecret(secret)).toBe(false);
    }
    expect(isWebhookSecret(SECRET)).toBe(true);
  });
});
