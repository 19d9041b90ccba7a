import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { beforeAll, describe, expect, it } from "vitest";
import { forgetSigningSecret } from "../../src/services/outbound";
import { answer, callTools } from "../fakes/openai";
import { llmServer } from "../fakes/server";
import {
  fakeWebhookAgent,
  newWebhookSecret,
  replyOutput,
  replyText,
  type WebhookDelivery,
} from "../fakes/webhook-agent";
import { BETA_KEY, call, putSecret } from "./helpers";
import { script } from "./run-fixtures";

/**
 * Every outbound delivery is signed with a secret of the sending tenant: the vault secret the
 * definition names (`signing_secret`), else the tenant's own signing secret, which the tenant
 * reads and rotates through the API; the signed body names the tenant and the target.
 * Signatures are checked with the `standardwebhooks` reference library.
 */

const AGENT_URL = "https://remote.example.com/agent";
const TOOL_URL = "https://tools.example.com/remote";

beforeAll(async () => {
  await call("PUT", "/v1/agents/remote", { name: "remote", kind: "webhook", endpoint: AGENT_URL });
  await call("PUT", "/v1/agents/bare", { name: "bare", kind: "webhook", endpoint: AGENT_URL, signing: "none" });
  await call("PUT", "/v1/tools/remote_tool", { name: "remote_tool", kind: "http", url: TOOL_URL });
  await call("PUT", "/v1/agents/tool-user", {
    name: "tool-user",
    description: "Calls remote_tool",
    tools: { allow: ["remote_tool"] },
  });
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
});

/** The receiver: records deliveries (verified below with the secrets the test holds) and answers `reply`. */
function receiver(url: string, reply = replyOutput("ok")) {
  const fake = fakeWebhookAgent({ url, respond: () => reply });
  llmServer.use(fake.handler);
  return fake;
}

/** Whether the reference library accepts the delivery with `secret`. */
function verifies(delivery: WebhookDelivery, secret: string): boolean {
  try {
    new Webhook(secret).verify(delivery.text, delivery.headers);
    return true;
  } catch {
    return false;
  }
}

/** One turn of the `remote` webhook agent; its delivery. */
async function agentDelivery(agent = "remote"): Promise<WebhookDelivery> {
  const fake = receiver(AGENT_URL);
  const session = await call("POST", "/v1/sessions", { agent });
  const res = await call("POST", `/v1/sessions/${session.json.id}/messages`, { role: "user", content: "hi" });
  expect(res.json.run).toMatchObject({ status: "completed", output: "ok" });
  expect(fake.deliveries).toHaveLength(1);
  return fake.deliveries[0]!;
}

const secretOf = async (key?: string) =>
  (await call("GET", "/v1/config/signing-secret", undefined, key ? { key } : {})).json;

describe("the tenant's signing secret", () => {
  it("is made by Relay on first read, the same on every read, and each tenant reads only its own", async () => {
    const first = await call("GET", "/v1/config/signing-secret");
    expect(first.status).toBe(200);
    expect(first.json).toEqual({
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      previous: null,
      created_at: expect.any(String),
      rotated_at: null,
    });
    expect(await secretOf()).toEqual(first.json);
    const beta = await secretOf(BETA_KEY);
    expect(beta.secret).toMatch(/^whsec_/);
    expect(beta.secret).not.toBe(first.json.secret);
    expect((await secretOf()).secret).toBe(first.json.secret);
  });

  it("signs a webhook agent's turn that names no signing_secret, the body naming tenant and target", async () => {
    const { secret } = await secretOf();
    const delivery = await agentDelivery();
    expect(delivery.headers["webhook-signature"]).toMatch(/^v1,\S+$/);
    expect(verifies(delivery, secret)).toBe(true);
    expect(verifies(delivery, newWebhookSecret())).toBe(false);
    expect(verifies(delivery, (await secretOf(BETA_KEY)).secret)).toBe(false);
    expect(delivery.body).toMatchObject({ type: "agent.turn", tenant: "alpha", target: "agent:remote" });
  });

  it("signs with the vault secret the agent names; a new value signs at once, and a list signs with each", async () => {
    const first = newWebhookSecret();
    const second = newWebhookSecret();
    await putSecret("remote-signing", first);
    const named = await call("PUT", "/v1/agents/vaulted", {
      name: "vaulted",
      kind: "webhook",
      endpoint: AGENT_URL,
      signing_secret: "remote-signing",
    });
    expect(named.status).toBe(201);
    const before = await agentDelivery("vaulted");
    expect(verifies(before, first)).toBe(true);
    expect(verifies(before, (await secretOf()).secret)).toBe(false);
    await putSecret("remote-signing", `${second}, ${first}`);
    const during = await agentDelivery("vaulted");
    expect(during.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    expect(verifies(during, second)).toBe(true);
    expect(verifies(during, first)).toBe(true);
  });

  it("signs an http tool's call that names no signing_secret, the body naming tenant and target", async () => {
    const { secret } = await secretOf();
    const tool = receiver(TOOL_URL, replyText('{"ok":true}'));
    script({ "tool-user": [callTools({ name: "remote_tool", arguments: { q: 1 } }), answer("Done.")] });
    const session = await call("POST", "/v1/sessions", { agent: "tool-user" });
    const res = await call("POST", `/v1/sessions/${session.json.id}/messages`, { role: "user", content: "go" });
    expect(res.json.run).toMatchObject({ status: "completed", output: "Done." });
    expect(tool.deliveries).toHaveLength(1);
    expect(verifies(tool.deliveries[0]!, secret)).toBe(true);
    expect(verifies(tool.deliveries[0]!, newWebhookSecret())).toBe(false);
    expect(tool.deliveries[0]!.body).toMatchObject({ type: "tool.call", tenant: "alpha", target: "tool:remote_tool" });
  });

  it("leaves a delivery unsigned only when the definition says signing: none", async () => {
    const delivery = await agentDelivery("bare");
    expect(delivery.headers["webhook-signature"]).toBeUndefined();
    expect(delivery.headers).toMatchObject({
      "webhook-id": expect.any(String),
      "webhook-timestamp": expect.any(String),
    });
    const refused = receiver(AGENT_URL, replyText("unsigned", 401));
    const session = await call("POST", "/v1/sessions", { agent: "bare" });
    const res = await call("POST", `/v1/sessions/${session.json.id}/messages`, { role: "user", content: "hi" });
    expect(res.json.run.error.message).toContain(
      "the delivery was unsigned: the agent's definition says signing: none",
    );
    expect(refused.deliveries).toHaveLength(1);
  });

  it("a client tool has nothing to sign: signing on it is refused", async () => {
    const res = await call("PUT", "/v1/tools/picker", { name: "picker", kind: "client", signing: "none" });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("VALIDATION_FAILED");
  });
});

describe("rotation", () => {
  it("signs with both secrets during the grace period, with the new one only after it", async () => {
    const old = (await secretOf()).secret;
    const before = Date.now();
    const rotated = await call("POST", "/v1/config/signing-secret/rotate");
    expect(rotated.status).toBe(200);
    const fresh = rotated.json.secret;
    expect(fresh).not.toBe(old);
    expect(rotated.json.previous.secret).toBe(old);
    const grace = Date.parse(rotated.json.previous.expires_at) - before;
    expect(grace).toBeGreaterThanOrEqual(86_400_000 - 1000);
    expect(grace).toBeLessThanOrEqual(86_400_000 + 60_000);
    expect(await secretOf()).toEqual(rotated.json);

    const during = await agentDelivery();
    expect(during.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    expect(verifies(during, fresh)).toBe(true);
    expect(verifies(during, old)).toBe(true);

    // The grace period ends: the replaced secret's expiry is moved into the past.
    await env.DB.prepare("UPDATE signing_secrets SET previous_expires_at = ?1 WHERE tenant = 'alpha'")
      .bind(new Date(Date.now() - 1000).toISOString())
      .run();
    forgetSigningSecret("alpha");
    expect((await secretOf()).previous).toBeNull();
    const after = await agentDelivery();
    expect(verifies(after, fresh)).toBe(true);
    expect(verifies(after, old)).toBe(false);
  });

  it("grace_s: 0 drops the replaced secret at once; a bad grace_s is 400", async () => {
    const old = (await secretOf()).secret;
    const rotated = await call("POST", "/v1/config/signing-secret/rotate", { grace_s: 0 });
    expect(rotated.json).toMatchObject({ previous: null, rotated_at: expect.any(String) });
    const delivery = await agentDelivery();
    expect(verifies(delivery, rotated.json.secret)).toBe(true);
    expect(verifies(delivery, old)).toBe(false);
    for (const body of [{ grace_s: -1 }, { grace_s: 8 * 86_400 }, { grace_s: 1.5 }, { other: 1 }]) {
      const res = await call("POST", "/v1/config/signing-secret/rotate", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error.code).toBe("VALIDATION_FAILED");
    }
    expect((await secretOf()).secret).toBe(rotated.json.secret);
  });

  it("a rotation is the rotating tenant's alone", async () => {
    const beta = (await secretOf(BETA_KEY)).secret;
    await call("POST", "/v1/config/signing-secret/rotate");
    expect((await secretOf(BETA_KEY)).secret).toBe(beta);
  });
});
