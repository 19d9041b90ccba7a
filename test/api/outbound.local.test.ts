import { Webhook } from "standardwebhooks";
import { beforeAll, describe, expect, it } from "vitest";
import { answer, callTools } from "../fakes/openai";
import { llmServer } from "../fakes/server";
import { fakeWebhookAgent, replyOutput, replyText } from "../fakes/webhook-agent";
import { call } from "./helpers";
import { storeUnchecked, watchFetches } from "./outbound-fixtures";
import { script } from "./run-fixtures";

/**
 * A Relay whose operator set RELAY_ALLOW_LOCAL_ENDPOINTS=true (what `npm run dev` gets from
 * .dev.vars.example; vitest.config.ts runs this file in its `local-endpoints` project, with
 * RELAY_HOSTS naming wrangler dev's 127.0.0.1:8787): a webhook agent and an http tool on this
 * machine, named by a loopback address or `localhost`, work, signed as ever; Relay's own
 * address stays refused, and every other name or address is judged as on a deployed Relay.
 */

const fetches = watchFetches();

beforeAll(async () => {
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
});

describe("with local endpoints allowed", () => {
  it("GET /v1/config says so", async () => {
    expect((await call("GET", "/v1/config")).json).toEqual({
      outbound: { allow_local_endpoints: true, relay_hosts: ["relay.test", "127.0.0.1:8787"] },
    });
  });

  it("a webhook agent on this machine is registered and runs, its delivery signed with the tenant's secret", async () => {
    const url = "http://127.0.0.1:9000/agent";
    const put = await call("PUT", "/v1/agents/local-hook", { name: "local-hook", kind: "webhook", endpoint: url });
    expect(put.status).toBe(201);
    const fake = fakeWebhookAgent({ url, respond: () => replyOutput("Hello from this machine.") });
    llmServer.use(fake.handler);
    const session = await call("POST", "/v1/sessions", { agent: "local-hook" });
    const res = await call("POST", `/v1/sessions/${session.json.id}/messages`, { role: "user", content: "hi" });
    expect(res.json.run).toMatchObject({ status: "completed", output: "Hello from this machine." });
    const { secret } = (await call("GET", "/v1/config/signing-secret")).json;
    const delivery = fake.deliveries[0]!;
    expect(() => new Webhook(secret).verify(delivery.text, delivery.headers)).not.toThrow();
  });

  it("an http tool at localhost is called", async () => {
    const url = "http://localhost:3000/lookup";
    expect((await call("PUT", "/v1/tools/local_lookup", { name: "local_lookup", kind: "http", url })).status).toBe(201);
    await call("PUT", "/v1/agents/tool-user", {
      name: "tool-user",
      description: "Looks things up",
      tools: { allow: ["local_lookup"] },
    });
    const tool = fakeWebhookAgent({ url, respond: () => replyText('{"found":true}') });
    llmServer.use(tool.handler);
    const fake = script({ "tool-user": [callTools({ name: "local_lookup", arguments: {} }), answer("Found it.")] });
    const session = await call("POST", "/v1/sessions", { agent: "tool-user" });
    const res = await call("POST", `/v1/sessions/${session.json.id}/messages`, { role: "user", content: "go" });
    expect(res.json.run).toMatchObject({ status: "completed", output: "Found it." });
    expect(tool.deliveries).toHaveLength(1);
    expect(fake.requests[1]!.body.messages.find((m) => m.role === "tool")!.content).toBe('{"found":true}');
  });

  it("Relay's own address, other names for this machine, the local network, link-local, .internal and credentials stay refused at registration", async () => {
    const still: [string, string][] = [
      ["http://127.0.0.1:8787/health", "relay_host"],
      ["http://localhost:8787/v1/webhooks/demo", "relay_host"],
      ["http://0x7f000001:8787/v1/webhooks/demo", "relay_host"],
      ["http://[::ffff:127.0.0.1]:8787/v1/webhooks/demo", "relay_host"],
      ["http://relay.test/v1/webhooks/crm", "relay_host"],
      ["http://myhost:8787/v1/webhooks/demo", "https_only"],
      ["http://relay.localhost:8787/v1/webhooks/demo", "relay_host"],
      ["http://app.localhost:9000/", "local_hostname"],
      ["http://printer.local/", "local_hostname"],
      ["http://192.168.1.20:3000/lookup", "private_address"],
      ["http://[fd00::1]/", "unique_local_address"],
      ["http://169.254.169.254/latest/meta-data/", "link_local_address"],
      ["http://metadata.google.internal/", "internal_hostname"],
      ["http://0.0.0.0:9000/", "unspecified_address"],
      ["http://user:pass@127.0.0.1:9000/", "no_userinfo"],
    ];
    for (const [url, rule] of still) {
      for (const [path, body] of [
        ["/v1/agents/nope", { name: "nope", kind: "webhook", endpoint: url }],
        ["/v1/tools/nope", { name: "nope", kind: "http", url }],
        ["/v1/config/events", { url }],
      ] as const) {
        const res = await call("PUT", path, body);
        expect(res.status, `${path} ${url}`).toBe(400);
        expect(res.json.error.details.rule, `${path} ${url}`).toBe(rule);
      }
    }
  });

  it("and at call time: a stored agent pointing at Relay itself fails without a fetch", async () => {
    fetches.urls.length = 0;
    await storeUnchecked("agents", "alpha", {
      name: "loop",
      kind: "webhook",
      endpoint: "http://localhost:8787/v1/webhooks/demo",
    });
    const session = await call("POST", "/v1/sessions", { agent: "loop" });
    const res = await call("POST", `/v1/sessions/${session.json.id}/messages`, { role: "user", content: "hi" });
    expect(res.json.run).toMatchObject({ status: "failed", error: { code: "ENDPOINT_NOT_ALLOWED" } });
    expect(res.json.run.error.message).toContain("(relay_host)");
    expect(fetches.urls).toEqual([]);
  });

  it("and at call time: a stored agent on the local network, or named by a host name, fails without a fetch", async () => {
    for (const [name, endpoint, rule] of [
      ["lan", "http://192.168.1.20:3000/agent", "private_address"],
      ["hosts-file", "http://myhost:9000/agent", "https_only"],
    ] as const) {
      fetches.urls.length = 0;
      await storeUnchecked("agents", "alpha", { name, kind: "webhook", endpoint });
      const session = await call("POST", "/v1/sessions", { agent: name });
      const res = await call("POST", `/v1/sessions/${session.json.id}/messages`, { role: "user", content: "hi" });
      expect(res.json.run, endpoint).toMatchObject({ status: "failed", error: { code: "ENDPOINT_NOT_ALLOWED" } });
      expect(res.json.run.error.message, endpoint).toContain(`(${rule})`);
      expect(fetches.urls, endpoint).toEqual([]);
    }
  });
});
