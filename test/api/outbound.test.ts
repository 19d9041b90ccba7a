import { runInDurableObject } from "cloudflare:test";
import { HttpResponse, http } from "msw";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { drainDue, sessionStub } from "../durable-objects/helpers";
import { answer, callTools } from "../fakes/openai";
import { llmServer } from "../fakes/server";
import { ALPHA_KEY, call } from "./helpers";
import { REFUSED, storeEventsUrl, storeUnchecked, watchFetches } from "./outbound-fixtures";
import { script } from "./run-fixtures";

/**
 * The outbound address policy on a deployed Relay (RELAY_ALLOW_LOCAL_ENDPOINTS off): every
 * address a hostile tenant tried is refused when a webhook agent, http tool or events URL
 * names it, and again when a definition stored before the policy is called — as a coded
 * error, without a fetch. A failed call quotes a short excerpt of the body only.
 * test/api/outbound.local.test.ts runs with the local switch on.
 */

const fetches = watchFetches();
afterEach(() => {
  fetches.urls.length = 0;
});
/** Relay fetched nothing but the fake model. */
const fetchedOnlyTheModel = () => expect(fetches.urls.filter((u) => !u.startsWith("https://llm.test/"))).toEqual([]);

beforeAll(async () => {
  for (const agent of [
    { name: "desk", description: "Desk", handoffs: ["billing"] },
    { name: "billing", description: "Billing" },
  ])
    await call("PUT", `/v1/agents/${agent.name}`, agent);
  await call("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
});

const markdownAgent = (name: string, endpoint: string) =>
  `---\nname: ${name}\nkind: webhook\nendpoint: "${endpoint}"\ndescription: A remote agent\n---\nBe brief.\n`;

describe("GET /v1/config", () => {
  it("shows that local endpoints are refused, and Relay's own hosts", async () => {
    const res = await call("GET", "/v1/config");
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ outbound: { allow_local_endpoints: false, relay_hosts: ["relay.test"] } });
  });
});

describe("at registration: 400 ENDPOINT_NOT_ALLOWED naming the rule, nothing stored", () => {
  const refused = (res: { status: number; json: any }, url: string, rule: string, field: string) => {
    expect(res.status, url).toBe(400);
    expect(res.json.error.code, url).toBe("ENDPOINT_NOT_ALLOWED");
    expect(res.json.error.details, url).toEqual({ rule, url, field });
    expect(res.json.error.message, url).toContain(`${field}: `);
  };

  it("a webhook agent's endpoint (JSON)", async () => {
    for (const [i, [url, rule]] of REFUSED.entries()) {
      const res = await call("PUT", `/v1/agents/hook-${i}`, { name: `hook-${i}`, kind: "webhook", endpoint: url });
      refused(res, url, rule, "endpoint");
      expect((await call("GET", `/v1/agents/hook-${i}`)).status, url).toBe(404);
    }
  });

  it("a webhook agent's endpoint (Markdown agent file)", async () => {
    for (const [i, [url, rule]] of REFUSED.entries()) {
      const res = await call("PUT", `/v1/agents/md-${i}`, markdownAgent(`md-${i}`, url), {
        headers: { "Content-Type": "text/markdown" },
      });
      refused(res, url, rule, "endpoint");
      expect((await call("GET", `/v1/agents/md-${i}`)).status, url).toBe(404);
    }
  });

  it("an http tool's url", async () => {
    for (const [i, [url, rule]] of REFUSED.entries()) {
      const res = await call("PUT", `/v1/tools/tool_${i}`, { name: `tool_${i}`, kind: "http", url });
      refused(res, url, rule, "url");
      expect((await call("GET", `/v1/tools/tool_${i}`)).status, url).toBe(404);
    }
  });

  it("the events URL; the subscription stays as it was", async () => {
    const kept = await call("PUT", "/v1/config/events", { url: "https://receiver.example.com/relay" });
    expect(kept.status).toBe(201);
    for (const [url, rule] of REFUSED) refused(await call("PUT", "/v1/config/events", { url }), url, rule, "url");
    expect((await call("GET", "/v1/config/events")).json).toEqual(kept.json);
    await call("DELETE", "/v1/config/events");
  });

  it("public https addresses pass", async () => {
    const agent = { name: "public-hook", kind: "webhook", endpoint: "https://hooks.example.com:8443/agent?x=1" };
    expect((await call("PUT", "/v1/agents/public-hook", agent)).status).toBe(201);
    const tool = { name: "public_tool", kind: "http", url: "https://[2606:4700:4700::1111]/tool" };
    expect((await call("PUT", "/v1/tools/public_tool", tool)).status).toBe(201);
    fetchedOnlyTheModel();
  });
});

describe("at call time: a definition stored before the policy is refused without a fetch", () => {
  it("a webhook agent's turn fails the run with ENDPOINT_NOT_ALLOWED naming the rule", async () => {
    for (const [i, [url, rule]] of REFUSED.entries()) {
      await storeUnchecked("agents", "alpha", { name: `stale-${i}`, kind: "webhook", endpoint: url });
      const session = await call("POST", "/v1/sessions", { agent: `stale-${i}` });
      expect(session.status, url).toBe(201);
      const res = await call("POST", `/v1/sessions/${session.json.id}/messages`, { role: "user", content: "hi" });
      expect(res.json.run, url).toMatchObject({ status: "failed", error: { code: "ENDPOINT_NOT_ALLOWED" } });
      expect(res.json.run.error.message, url).toContain(`the endpoint is not allowed (${rule})`);
    }
    fetchedOnlyTheModel();
  });

  it("an http tool's call is an error output the model sees; the run goes on", async () => {
    const names = REFUSED.map((_, i) => `stale_tool_${i}`);
    for (const [i, [url]] of REFUSED.entries())
      await storeUnchecked("tools", "alpha", { name: names[i]!, kind: "http", url });
    await call("PUT", "/v1/agents/caller", { name: "caller", description: "Calls tools", tools: { allow: names } });
    const fake = script({
      caller: [callTools(...names.map((name) => ({ name, arguments: {} }))), answer("None of them worked.")],
    });
    const session = await call("POST", "/v1/sessions", { agent: "caller" });
    const res = await call("POST", `/v1/sessions/${session.json.id}/messages`, { role: "user", content: "go" });
    expect(res.json.run).toMatchObject({ status: "completed", output: "None of them worked." });
    const outputs = fake.requests[1]!.body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    expect(outputs).toHaveLength(REFUSED.length);
    for (const [i, [url, rule]] of REFUSED.entries())
      expect(outputs[i], url).toMatch(
        new RegExp(`^Error: '${names[i]}' was not called: its url is not allowed \\(${rule}\\): `),
      );
    fetchedOnlyTheModel();
  });

  it("a fan-out task on such a webhook agent fails with ENDPOINT_NOT_ALLOWED", async () => {
    await storeUnchecked("agents", "alpha", { name: "stale-fan", kind: "webhook", endpoint: "http://10.0.0.1/" });
    await call("PUT", "/v1/agents/planner", { name: "planner", description: "Plans", handoffs: ["stale-fan"] });
    const session = await call("POST", "/v1/sessions", { agent: "planner" });
    const decomposition = {
      original_query: "check",
      tasks: [{ task_id: "t1", agent: "stale-fan", instruction: "check", timeout_s: 5 }],
    };
    const res = await call("POST", `/v1/sessions/${session.json.id}/fan-out`, { decomposition });
    expect(res.json.results).toEqual([expect.objectContaining({ success: false, error: "ENDPOINT_NOT_ALLOWED" })]);
    fetchedOnlyTheModel();
  });

  it("an events URL: each attempt fails with ENDPOINT_NOT_ALLOWED and is kept for retry, nothing is sent", async () => {
    for (const [url, rule] of REFUSED) {
      await storeEventsUrl("alpha", url, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
      const id = (await call("POST", "/v1/sessions", { agent: "desk" })).json.id;
      const handoff = { session_id: id, source_agent: "desk", target_agent: "billing", reason: "billing question" };
      expect((await call("POST", "/v1/handoffs", handoff)).status, url).toBe(200);
      const { stub } = sessionStub("alpha", id);
      await drainDue(stub);
      const errors = await runInDurableObject(stub, (_instance, state) =>
        state.storage.sql.exec("SELECT attempts, last_error FROM deliveries").toArray(),
      );
      expect(errors.length, url).toBeGreaterThan(0);
      for (const row of errors)
        expect(row, url).toMatchObject({
          attempts: 1,
          last_error: expect.stringMatching(new RegExp(`^ENDPOINT_NOT_ALLOWED \\(${rule}\\): `)),
        });
    }
    fetchedOnlyTheModel();
    await call("DELETE", "/v1/config/events");
  });
});

describe("a failed call's error quotes at most a short excerpt of the body", () => {
  const LONG = `BEGIN ${"secret-looking-internal-detail ".repeat(400)}END`;

  it("a webhook agent's error reply", async () => {
    llmServer.use(http.post("https://hooks.example.com/long", () => new HttpResponse(LONG, { status: 500 })));
    await call("PUT", "/v1/agents/long-hook", {
      name: "long-hook",
      kind: "webhook",
      endpoint: "https://hooks.example.com/long",
    });
    const session = await call("POST", "/v1/sessions", { agent: "long-hook" });
    const res = await call("POST", `/v1/sessions/${session.json.id}/messages`, { role: "user", content: "hi" });
    const { code, message } = res.json.run.error;
    expect(code).toBe("WEBHOOK_ERROR");
    expect(message).toMatch(/^long-hook: the webhook answered HTTP 500: BEGIN secret-looking/);
    const quoted = message.slice(message.indexOf("BEGIN"));
    expect(quoted.length).toBeLessThanOrEqual(200);
    expect(message).not.toContain("END");
    expect(fetches.urls).toEqual(["https://hooks.example.com/long"]);
  });

  it("an http tool's error reply", async () => {
    llmServer.use(http.post("https://tools.example.com/long", () => new HttpResponse(LONG, { status: 502 })));
    await call("PUT", "/v1/tools/long_tool", {
      name: "long_tool",
      kind: "http",
      url: "https://tools.example.com/long",
    });
    await call("PUT", "/v1/agents/long-caller", {
      name: "long-caller",
      description: "Calls one tool",
      tools: { allow: ["long_tool"] },
    });
    const fake = script({ "long-caller": [callTools({ name: "long_tool", arguments: {} }), answer("It failed.")] });
    const session = await call("POST", "/v1/sessions", { agent: "long-caller" }, { key: ALPHA_KEY });
    await call("POST", `/v1/sessions/${session.json.id}/messages`, { role: "user", content: "go" });
    const output = String(fake.requests[1]!.body.messages.find((m) => m.role === "tool")!.content);
    expect(output).toMatch(/^Error: 'long_tool' failed with HTTP 502: BEGIN secret-looking/);
    expect(output.slice(output.indexOf("BEGIN")).length).toBeLessThanOrEqual(200);
    expect(output).not.toContain("END");
  });
});
