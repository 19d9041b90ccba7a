import { env } from "cloudflare:workers";
import { HttpResponse, http } from "msw";
import { Webhook } from "standardwebhooks";
import { beforeAll, describe, expect, it } from "vitest";
import { invalidateTenant } from "../../src/services/registry-cache";
import { answer, callTool } from "../fakes/openai";
import { llmServer } from "../fakes/server";
import { fakeWebhookAgent, replyOutput, type WebhookDelivery } from "../fakes/webhook-agent";
import { BETA_KEY, call, putSecret } from "./helpers";
import { script } from "./run-fixtures";

/**
 * Each tenant's secrets are its own (docs/security.md): a definition names only its own
 * tenant's vault, never the Worker's environment or another tenant's vault; everything Relay
 * sends for a tenant is signed with that tenant's secrets and names it. Tenant `alpha` plays
 * the victim, `beta` the tenant probing it, with the servers beta runs faked by msw.
 */

const ALPHA_HOOK_SECRET = "whsec_YWxwaGEtYmlsbGluZy1ob29rLXNlY3JldC0wMQ==";
const as = { key: BETA_KEY };

/** Every request a server beta runs receives, whatever its method, with its headers. */
function probeServer(url: string) {
  const seen: { method: string; headers: Record<string, string>; body: string }[] = [];
  const handler = http.all(url, async ({ request }) => {
    const body = await request.text();
    seen.push({ method: request.method, headers: Object.fromEntries(request.headers), body });
    let id: unknown = null;
    try {
      id = (JSON.parse(body) as { id?: unknown }).id ?? null;
    } catch {}
    return HttpResponse.json({ jsonrpc: "2.0", id, error: { code: -32601, message: "not served here" } });
  });
  llmServer.use(handler);
  return seen;
}

/** Every value no tenant may ever see leave Relay. */
const operatorValues = () =>
  [
    env.RELAY_API_KEYS!,
    "alpha-test-key",
    env.RELAY_VAULT_KEY!,
    env.AGENT_SECRET_HOOK,
    env.TOOL_SECRET_LOOKUP_ORDER,
    ALPHA_HOOK_SECRET,
  ] as const;

beforeAll(async () => {
  await putSecret("billing-hook", ALPHA_HOOK_SECRET);
  const billing = await call("PUT", "/v1/agents/billing", {
    name: "billing",
    kind: "webhook",
    endpoint: "https://alpha-billing.test/agent",
    signing_secret: "billing-hook",
  });
  expect(billing.status).toBe(201);
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } }, as);
});

describe("a tenant's MCP tool naming secrets", () => {
  it("is refused at registration for Worker secrets and another tenant's vault secret, and beta's server hears nothing", async () => {
    const seen = probeServer("https://beta-mcp.test/mcp");
    for (const name of [
      "RELAY_API_KEYS",
      "RELAY_VAULT_KEY",
      "AGENT_SECRET_HOOK",
      "TOOL_SECRET_LOOKUP_ORDER",
      "billing-hook",
    ]) {
      const res = await call(
        "PUT",
        "/v1/tools/leak",
        { name: "leak", kind: "mcp", url: "https://beta-mcp.test/mcp", headers: { "X-Leak": name } },
        as,
      );
      expect(res.status, name).toBe(400);
      expect(res.json.error, name).toMatchObject({
        code: "UNKNOWN_SECRET",
        message: `headers.X-Leak names the secret '${name}', which is not in this tenant's vault: store it first with PUT /v1/secrets/${name}.`,
        details: { secrets: [{ field: "headers.X-Leak", name }] },
      });
    }
    expect((await call("GET", "/v1/tools/leak", undefined, as)).status).toBe(404);
    expect((await call("POST", "/v1/tools/leak/refresh", undefined, as)).status).toBe(404);
    expect(seen).toEqual([]);
  });

  it("stored before the vault (naming a Worker secret), is refused when called, with what to do; nothing is sent", async () => {
    const seen = probeServer("https://beta-mcp.test/old");
    // A definition as the registry held it when MCP headers named Worker secrets.
    const old = { name: "old", kind: "mcp", url: "https://beta-mcp.test/old", headers: { "X-Leak": "RELAY_API_KEYS" } };
    await env.DB.prepare(
      "INSERT INTO tools (tenant, name, definition, created_at, updated_at) VALUES ('beta', 'old', ?1, ?2, ?2)",
    )
      .bind(
        JSON.stringify({
          ...old,
          description: "",
          parameters: { type: "object", properties: {} },
          timeout_s: 10,
          max_response_bytes: 65536,
        }),
        new Date().toISOString(),
      )
      .run();
    invalidateTenant("beta");
    const refresh = await call("POST", "/v1/tools/old/refresh", undefined, as);
    expect(refresh.status).toBe(400);
    expect(refresh.json.error).toMatchObject({ code: "UNKNOWN_SECRET", details: { tool: "old" } });
    expect(refresh.json.error.message).toContain("store it with PUT /v1/secrets/RELAY_API_KEYS");

    const agent = await call("PUT", "/v1/agents/old-user", { name: "old-user", tools: { allow: ["old"] } }, as);
    expect(agent.status).toBe(201);
    script({ "old-user": [callTool("old__anything", {}), answer("never")] });
    const session = await call("POST", "/v1/sessions", { agent: "old-user" }, as);
    const run = await call("POST", `/v1/sessions/${session.json.id}/messages`, { role: "user", content: "hi" }, as);
    expect(run.json.run).toMatchObject({ status: "failed", error: { code: "UNKNOWN_SECRET" } });
    expect(seen).toEqual([]);
    for (const value of operatorValues()) expect(JSON.stringify([refresh.json, run.json])).not.toContain(value);
  });

  it("naming beta's own vault secret, sends its value, and only its value", async () => {
    const seen = probeServer("https://beta-mcp.test/own");
    await putSecret("beta-mcp-token", "Bearer beta-own-token", BETA_KEY);
    const res = await call(
      "PUT",
      "/v1/tools/own",
      { name: "own", kind: "mcp", url: "https://beta-mcp.test/own", headers: { Authorization: "beta-mcp-token" } },
      as,
    );
    expect(res.status).toBe(201);
    await call("POST", "/v1/tools/own/refresh", undefined, as);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((r) => r.headers.authorization === "Bearer beta-own-token")).toBe(true);
    for (const value of operatorValues()) expect(JSON.stringify(seen)).not.toContain(value);
  });
});

describe("a tenant's webhook agent named like another tenant's", () => {
  let delivery: WebhookDelivery;
  let hookDelivery: WebhookDelivery;

  beforeAll(async () => {
    for (const name of ["billing", "hook"]) {
      const res = await call(
        "PUT",
        `/v1/agents/${name}`,
        { name, kind: "webhook", endpoint: `https://beta-${name}.test/agent` },
        as,
      );
      expect(res.status).toBe(201);
    }
    const turn = async (name: string) => {
      const fake = fakeWebhookAgent({ url: `https://beta-${name}.test/agent`, respond: () => replyOutput("ok") });
      llmServer.use(fake.handler);
      const session = await call("POST", "/v1/sessions", { agent: name }, as);
      await call("POST", `/v1/sessions/${session.json.id}/messages`, { role: "user", content: "hi" }, as);
      expect(fake.deliveries).toHaveLength(1);
      return fake.deliveries[0]!;
    };
    delivery = await turn("billing");
    hookDelivery = await turn("hook");
  });

  const verifies = (d: WebhookDelivery, secret: string) => {
    try {
      new Webhook(secret).verify(d.text, d.headers);
      return true;
    } catch {
      return false;
    }
  };

  it("gets a delivery that does not verify under alpha's secret, and whose signed content names beta", async () => {
    const alphaTenantSecret = (await call("GET", "/v1/config/signing-secret")).json.secret;
    const betaTenantSecret = (await call("GET", "/v1/config/signing-secret", undefined, as)).json.secret;
    expect(verifies(delivery, ALPHA_HOOK_SECRET)).toBe(false);
    expect(verifies(delivery, alphaTenantSecret)).toBe(false);
    expect(verifies(delivery, betaTenantSecret)).toBe(true);
    const signed = new Webhook(betaTenantSecret).verify(delivery.text, delivery.headers);
    expect(signed).toMatchObject({ type: "agent.turn", tenant: "beta", target: "agent:billing" });
  });

  it("is never signed with an operator secret named after the agent (AGENT_SECRET_HOOK)", async () => {
    expect(verifies(hookDelivery, env.AGENT_SECRET_HOOK)).toBe(false);
    expect(JSON.parse(hookDelivery.text)).toMatchObject({ tenant: "beta", target: "agent:hook" });
    for (const value of operatorValues()) expect(JSON.stringify(hookDelivery)).not.toContain(value);
  });
});

describe("what a remote echoes of a vault value", () => {
  const TOKEN = "Bearer echo-token-5c1b9e7d";

  beforeAll(async () => {
    await putSecret("echo-token", TOKEN, BETA_KEY);
    const agent = await call(
      "PUT",
      "/v1/agents/echo-hook",
      {
        name: "echo-hook",
        kind: "webhook",
        endpoint: "https://beta-echo.test/agent",
        headers: { "X-Api-Key": "echo-token" },
      },
      as,
    );
    expect(agent.status).toBe(201);
    const tool = await call(
      "PUT",
      "/v1/tools/echo-tool",
      { name: "echo-tool", kind: "http", url: "https://beta-echo.test/tool", headers: { Authorization: "echo-token" } },
      as,
    );
    expect(tool.status).toBe(201);
    const user = await call(
      "PUT",
      "/v1/agents/echo-user",
      { name: "echo-user", description: "Calls echo-tool", tools: { allow: ["echo-tool"] } },
      as,
    );
    expect(user.status).toBe(201);
  });

  it("is redacted from a webhook agent's failure and answer: the run shows [secret], never the value", async () => {
    const replies = [
      (key: string) => HttpResponse.text(`key ${key} is not valid`, { status: 401 }),
      (key: string) => HttpResponse.json({ output: `you sent me ${key}` }),
    ];
    llmServer.use(
      http.post("https://beta-echo.test/agent", ({ request }) => replies.shift()!(request.headers.get("x-api-key")!)),
    );
    const session = await call("POST", "/v1/sessions", { agent: "echo-hook" }, as);
    const say = () => call("POST", `/v1/sessions/${session.json.id}/messages`, { role: "user", content: "hi" }, as);
    const failed = await say();
    expect(failed.json.run).toMatchObject({ status: "failed", error: { code: "WEBHOOK_ERROR" } });
    expect(failed.json.run.error.message).toContain("key [secret] is not valid");
    const answered = await say();
    expect(answered.json.run).toMatchObject({ status: "completed", output: "you sent me [secret]" });
    const history = await call("GET", `/v1/sessions/${session.json.id}/messages`, undefined, as);
    const trace = await call("GET", `/v1/sessions/${session.json.id}/trace`, undefined, as);
    for (const res of [failed, answered, history, trace]) {
      expect(JSON.stringify(res.json)).not.toContain("echo-token-5c1b9e7d");
    }
  });

  it("is redacted from an http tool's reply before the model or the history sees it", async () => {
    llmServer.use(
      http.post("https://beta-echo.test/tool", ({ request }) =>
        HttpResponse.text(`authorized as ${request.headers.get("authorization")}`),
      ),
    );
    const model = script({ "echo-user": [callTool("echo-tool", {}), answer("done")] });
    const session = await call("POST", "/v1/sessions", { agent: "echo-user" }, as);
    const run = await call("POST", `/v1/sessions/${session.json.id}/messages`, { role: "user", content: "go" }, as);
    expect(run.json.run).toMatchObject({ status: "completed", output: "done" });
    const toolMessage = model.requests[1]!.body.messages.find((m) => m.role === "tool");
    expect(toolMessage?.content).toBe("authorized as [secret]");
    const history = await call("GET", `/v1/sessions/${session.json.id}/messages`, undefined, as);
    expect(JSON.stringify([run.json, history.json, model.requests])).not.toContain("echo-token-5c1b9e7d");
  });
});
