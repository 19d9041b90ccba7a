import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import { app } from "../../src/app";
import { PATTERN_BUDGET, PATTERN_PREFIX } from "../../src/routing/rules";
import type { RouterRpc } from "../../src/rpc/router";
import { AgentDefinition } from "../../src/schemas/agent";
import { eventually } from "../eventually";
import { answer, callTool, callTools, delayed, type FakeReply, fakeOpenAI, garbage, httpError } from "../fakes/openai";
import { llmServer } from "../fakes/server";
import { shardOf } from "../shards";
import { BETA_KEY, call } from "./helpers";

const LLM_URL = "https://llm.test/v1";
/** The test env with its provider choice left to the key, as on a deployment with only OPENAI_API_KEY set. */
const withOpenAI = { ...env, OPENAI_API_KEY: "sk-test-key", OPENAI_BASE_URL: LLM_URL, ROUTING_LLM_PROVIDER: undefined };
const withoutKey = { ...env, OPENAI_API_KEY: undefined, ROUTING_LLM_PROVIDER: undefined };

/** The Worker called with `workerEnv` instead of the test pool's bindings. */
async function callWith(workerEnv: typeof env, body: unknown) {
  const response = await app.fetch(
    new Request("http://relay.test/v1/route", {
      method: "POST",
      headers: { Authorization: "Bearer alpha-test-key", "Content-Type": "application/json" },
      body: JSON.stringify(body),
    }),
    workerEnv,
  );
  return { status: response.status, json: (await response.json()) as any };
}

/** Routes through the Worker with the OpenAI-compatible provider pointed at the fake. */
async function routeWithModel(body: unknown, reply: FakeReply) {
  const fake = fakeOpenAI({ baseUrl: LLM_URL, respond: () => reply });
  llmServer.use(fake.handler);
  const response = await app.fetch(
    new Request("http://relay.test/v1/route", {
      method: "POST",
      headers: { Authorization: "Bearer alpha-test-key", "Content-Type": "application/json" },
      body: JSON.stringify(body),
    }),
    withOpenAI,
  );
  return { status: response.status, json: (await response.json()) as any, requests: fake.requests };
}

const team = [
  {
    name: "billing",
    title: "Billing",
    description: "Invoices, refunds and payments",
    triggers: {
      keywords: ["refund", "invoice", "退款"],
      patterns: ["charged\\s+twice"],
      priority: 80,
      examples: [
        "I want a refund",
        "I was charged twice for my subscription",
        "send me last month's invoice",
        "我想申请退款",
      ],
    },
  },
  {
    name: "technical",
    title: "Technical support",
    description: "Errors, crashes and login problems",
    triggers: {
      keywords: ["error", "crash", "login"],
      priority: 80,
      examples: ["the app crashes on start", "I cannot login", "I get an error when saving"],
    },
  },
  { name: "triage", title: "Triage", description: "First contact", triggers: { keywords: ["hello"], priority: 40 } },
];

beforeAll(async () => {
  for (const agent of team) expect((await call("PUT", `/v1/agents/${agent.name}`, agent)).status).toBeLessThan(300);
});

describe("POST /v1/route — rule tier", () => {
  it("decides by rules with the rule score, matches and candidates, and a Server-Timing header", async () => {
    const { status, json, headers } = await call("POST", "/v1/route", {
      input: "I was CHARGED twice, I want a refund",
    });
    expect(status).toBe(200);
    expect(json).toMatchObject({ agent: "billing", method: "rule", strategy: "hybrid", threshold: 80 });
    // refund (+10) and charged\s+twice (+20), × priority 80/100
    expect(json.score).toBe(24);
    expect(json.matched_keywords).toEqual(["refund"]);
    expect(json.matched_patterns).toEqual(["charged\\s+twice"]);
    expect(json.confidence).toBeGreaterThanOrEqual(80);
    expect(json.candidates[0].agent).toBe("billing");
    expect(json.candidates.length).toBeLessThanOrEqual(3);
    expect(typeof json.latency_us).toBe("number");
    expect(headers.get("Server-Timing")).toMatch(/registry;dur=[\d.]+, total;dur=[\d.]+/);
  });

  it("says the rule tier's share of the time, and none when only the LLM tier is asked", async () => {
    const ruled = (await call("POST", "/v1/route", { input: "I was charged twice, I want a refund" })).json;
    expect(ruled.rule_us).toBeGreaterThanOrEqual(0);
    expect(ruled.rule_us).toBeLessThanOrEqual(ruled.latency_us);
    const asked = (await call("POST", "/v1/route", { input: "refund", strategy: "llm" })).json;
    expect(asked.llm).toBeDefined();
    expect(asked.rule_us).toBeUndefined();
  });

  it("matches Chinese keywords as substrings", async () => {
    const { json } = await call("POST", "/v1/route", {
      input: "你好，我想申请退款。",
      strategy: "rule",
      config: { threshold: 0 },
    });
    expect(json.agent).toBe("billing");
    expect(json.matched_keywords).toContain("退款");
  });

  it("changes nothing: no registry version, agent or audit row moves", async () => {
    const count = async () =>
      Promise.all([
        env.DB.prepare("SELECT version FROM registry_versions WHERE tenant = 'alpha'").first("version"),
        (await shardOf("alpha")).prepare("SELECT count(*) AS n FROM audit_log").first("n"),
        env.DB.prepare("SELECT max(updated_at) AS t FROM agents").first("t"),
      ]);
    const before = await count();
    await call("POST", "/v1/route", { input: "refund please" });
    await call("POST", "/v1/route", { input: "something else entirely", strategy: "rule" });
    expect(await count()).toEqual(before);
  });

  it("sees registry changes at once (recompiles on the next route)", async () => {
    expect(
      (await call("POST", "/v1/route", { input: "my parcel is late", strategy: "rule", config: { threshold: 0 } })).json
        .agent,
    ).not.toBe("shipping");
    await call("PUT", "/v1/agents/shipping", { name: "shipping", triggers: { keywords: ["parcel"], priority: 90 } });
    const after = await call("POST", "/v1/route", {
      input: "my parcel is late",
      strategy: "rule",
      config: { threshold: 0 },
    });
    expect(after.json.agent).toBe("shipping");
    await call("DELETE", "/v1/agents/shipping");
    const gone = await call("POST", "/v1/route", {
      input: "my parcel is late",
      strategy: "rule",
      config: { threshold: 0 },
    });
    expect(gone.json.agent).not.toBe("shipping");
  });

  it("keeps tenants apart: beta has no agents, so nothing routes", async () => {
    const { json } = await call("POST", "/v1/route", { input: "refund", strategy: "rule" }, { key: BETA_KEY });
    expect(json.agent).toBeNull();
    expect(json.fallback.agents).toEqual([]);
  });
});

describe("POST /v1/route — patterns are matched in linear time", () => {
  it("a catastrophic pattern on a 30 KiB adversarial input answers at once and correctly (BETA's registry)", async () => {
    const as = { key: BETA_KEY };
    expect(
      (
        await call(
          "PUT",
          "/v1/agents/redos",
          { name: "redos", triggers: { patterns: ["(a|a?)+b", "(a|aa)+$"], priority: 100 } },
          as,
        )
      ).status,
    ).toBe(201);
    const input = `${"a".repeat(30 * 1024)}!`;
    const miss = await call("POST", "/v1/route", { input, strategy: "rule" }, as);
    expect(miss.status).toBe(200);
    expect(miss.json.agent).toBeNull();
    // Patterns read the input's first PATTERN_PREFIX code units: a match must lie within them.
    const hit = await call("POST", "/v1/route", { input: `${"a".repeat(PATTERN_PREFIX - 1)}b`, strategy: "rule" }, as);
    expect(hit.json).toMatchObject({ agent: "redos", matched_patterns: ["(a|a?)+b"] });
    expect((await call("DELETE", "/v1/agents/redos", undefined, as)).status).toBe(204);
  });

  it("a pattern that needs backtracking is refused at registration, naming the construct, and nothing is stored", async () => {
    const res = await call("PUT", "/v1/agents/looker", { name: "looker", triggers: { patterns: ["(?<=a)b"] } });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({
      code: "INVALID_PATTERN",
      details: { patterns: [{ pattern: "(?<=a)b", reason: expect.stringContaining("lookaround") }] },
    });
    expect((await call("GET", "/v1/agents/looker")).status).toBe(404);
  });
});

describe("POST /v1/route — hybrid escalation to the LLM", () => {
  it("asks the model when the rules are unsure, with one transfer tool per enabled agent and tool_choice required", async () => {
    const { json, requests } = await routeWithModel(
      { input: "my thing is acting weird since yesterday" },
      callTool("transfer_to_technical", { reason: "sounds like a bug" }),
    );
    expect(json).toMatchObject({ agent: "technical", method: "llm" });
    expect(json.llm).toMatchObject({
      provider: "openai",
      tool_call: { name: "transfer_to_technical", arguments: { reason: "sounds like a bug" } },
    });
    expect(requests).toHaveLength(1);
    expect(requests[0]!.authorization).toBe("Bearer sk-test-key");
    expect(requests[0]!.body.tool_choice).toBe("required");
    expect(requests[0]!.body.tools!.map((t) => t.function.name).sort()).toEqual([
      "transfer_to_billing",
      "transfer_to_technical",
      "transfer_to_triage",
    ]);
  });

  it("does not call the model when the rules are sure", async () => {
    const { json, requests } = await routeWithModel(
      { input: "I was charged twice, refund my invoice" },
      callTool("transfer_to_technical"),
    );
    expect(json.method).toBe("rule");
    expect(requests).toHaveLength(0);
  });

  it("takes the first tool call when the model makes several", async () => {
    const { json } = await routeWithModel(
      { input: "hmm", strategy: "llm" },
      callTools(
        { name: "transfer_to_triage", arguments: { reason: "first" } },
        { name: "transfer_to_billing", arguments: { reason: "second" } },
      ),
    );
    expect(json.agent).toBe("triage");
  });

  const failures: [string, FakeReply, string, object?][] = [
    ["a timeout", delayed(1000, callTool("transfer_to_billing")), "timeout", { llm: { timeout_ms: 100 } }],
    ["an HTTP error", httpError(500), "http_error"],
    ["a rate limit", httpError(429), "http_error"],
    ["a body that is not JSON", garbage(), "malformed_response"],
    ["malformed arguments", callTool("transfer_to_billing", "{not json"), "malformed_arguments"],
    ["arguments without a reason", callTool("transfer_to_billing", { context: "x" }), "malformed_arguments"],
    ["no tool call", answer("I think billing?"), "no_tool_call"],
    ["an unknown agent", callTool("transfer_to_legal"), "unknown_agent"],
  ];
  for (const [what, reply, reason, config] of failures) {
    it(`falls back on ${what}, with the reason`, async () => {
      const { status, json } = await routeWithModel(
        { input: "zzz qqq", strategy: "llm", ...(config ? { config } : {}) },
        reply,
      );
      expect(status).toBe(200);
      expect(json).toMatchObject({ agent: null, method: "fallback", fallback: { strategy: "prompt_user" } });
      expect(json.fallback.reason).toContain(reason);
      expect(json.llm.error).toContain(reason);
    });
  }

  it("falls back when the configured provider is not set up (openai without a key)", async () => {
    const { json } = await callWith(withoutKey, {
      input: "zzz",
      strategy: "llm",
      config: { llm: { provider: "openai" } },
    });
    expect(json.method).toBe("fallback");
    expect(json.fallback.reason).toContain("provider_unavailable");
  });

  it("routes offline with the local provider by default (no key configured)", async () => {
    const { json } = await callWith(withoutKey, { input: "invoices and payments question", strategy: "llm" });
    expect(json.llm.provider).toBe("local");
    expect(json).toMatchObject({ agent: "billing", method: "llm" });
  });
});

describe("POST /v1/route — fallback strategies and disabled routing", () => {
  const unmatched = { input: "zzz qqq", strategy: "rule" };

  it("prompt_user returns the agent list with descriptions", async () => {
    const { json } = await call("POST", "/v1/route", { ...unmatched, config: { fallback: "prompt_user" } });
    expect(json).toMatchObject({ agent: null, method: "fallback" });
    expect(json.fallback.agents).toContainEqual({
      name: "billing",
      title: "Billing",
      description: "Invoices, refunds and payments",
    });
  });

  it("default_agent routes to the configured agent", async () => {
    const { json } = await call("POST", "/v1/route", {
      ...unmatched,
      config: { fallback: "default_agent", default_agent: "triage" },
    });
    expect(json).toMatchObject({ agent: "triage", method: "fallback", fallback: { strategy: "default_agent" } });
  });

  it("none names no agent", async () => {
    const { json } = await call("POST", "/v1/route", { ...unmatched, config: { fallback: "none" } });
    expect(json).toMatchObject({ agent: null, method: "none" });
  });

  it("a default_agent fallback without an agent is refused as INVALID_CONFIG", async () => {
    const { status, json } = await call("POST", "/v1/route", { ...unmatched, config: { fallback: "default_agent" } });
    expect(status).toBe(400);
    expect(json.error.code).toBe("INVALID_CONFIG");
  });

  it("disabled routing → 409 ROUTING_DISABLED with the agent list", async () => {
    await call("PUT", "/v1/config/routing", { enabled: false });
    const { status, json } = await call("POST", "/v1/route", { input: "refund" });
    await call("DELETE", "/v1/config/routing");
    expect(status).toBe(409);
    expect(json.error.code).toBe("ROUTING_DISABLED");
    expect(json.error.details.agents.map((a: { name: string }) => a.name)).toContain("billing");
  });
});

describe("POST /v1/route — bad input", () => {
  it("input over 32 KiB → 413", async () => {
    const { status, json } = await call("POST", "/v1/route", { input: "é".repeat(16 * 1024 + 1) });
    expect(status).toBe(413);
    expect(json.error.code).toBe("PAYLOAD_TOO_LARGE");
  });

  it("empty input, unknown fields, a bad strategy or malformed JSON → 400", async () => {
    for (const body of [
      { input: "" },
      { input: "x", extra: 1 },
      { input: "x", strategy: "magic" },
      { input: 5 },
      { input: "x", config: { threshold: -1 } },
    ]) {
      const { status, json } = await call("POST", "/v1/route", body);
      expect(status).toBe(400);
      expect(json.error.code).toBe("VALIDATION_FAILED");
    }
    expect((await call("POST", "/v1/route", "{")).json.error.code).toBe("INVALID_JSON");
  });
});

describe("GET /v1/route/stats", () => {
  it("reports the compiled router: registry version, agents, compile time and memory", async () => {
    const before = await call("GET", "/v1/route/stats");
    expect(before.status).toBe(200);
    expect(before.json.agents).toBeGreaterThanOrEqual(3);
    expect(before.json.memory_bytes).toBeGreaterThan(0);
    await call("PUT", "/v1/agents/extra", { name: "extra", triggers: { examples: ["one more example utterance"] } });
    const after = await call("GET", "/v1/route/stats");
    expect(after.json.registry_version).toBeGreaterThan(before.json.registry_version);
    expect(after.json.agents).toBe(before.json.agents + 1);
    await call("DELETE", "/v1/agents/extra");
  });
});

describe("registry head cache", () => {
  it("serves routes from the isolate's cache after a write made elsewhere, and drops it on a write through the API", async () => {
    // The clock stands still, so the cache's one-second trust cannot run out mid-test
    // (the expiry itself is tested on tenantHead with explicit times).
    vi.useFakeTimers({ toFake: ["Date"] });
    onTestFinished(() => void vi.useRealTimers());
    await call("POST", "/v1/route", { input: "warm the cache", strategy: "rule" });
    // A write that bypasses this isolate (another isolate, or a migration): only D1 changes.
    await env.DB.prepare(
      "UPDATE registry_versions SET version = version + 1, stamp = 'elsewhere' WHERE tenant = 'alpha'",
    ).run();
    const stats = await call("GET", "/v1/route/stats");
    expect(stats.json.registry_version).not.toBe(
      await env.DB.prepare("SELECT version FROM registry_versions WHERE tenant = 'alpha'").first("version"),
    );
    // A write through the API invalidates at once.
    await call("PUT", "/v1/agents/cache-probe", { name: "cache-probe" });
    const fresh = await call("GET", "/v1/route/stats");
    expect(fresh.json.registry_version).toBe(
      await env.DB.prepare("SELECT version FROM registry_versions WHERE tenant = 'alpha'").first("version"),
    );
    await call("DELETE", "/v1/agents/cache-probe");
  });
});

describe("the tenant's pattern budget", () => {
  it("refuses an agent that would pass it: 400 PATTERN_BUDGET_EXCEEDED with the tenant's total and the limit", async () => {
    // One agent of 100 such patterns takes more than half the budget; two pass it.
    const big = Array.from({ length: 100 }, (_, i) => `(.*a){${120 + i}}`);
    const as = { key: BETA_KEY };
    const first = await call("PUT", "/v1/agents/heavy-1", { name: "heavy-1", triggers: { patterns: big } }, as);
    expect(first.status).toBe(201);
    const stats = await call("GET", "/v1/route/stats", undefined, as);
    const used = stats.json.pattern_budget.used as number;
    expect(stats.json.pattern_budget).toMatchObject({ limit: PATTERN_BUDGET, prefix: PATTERN_PREFIX });
    expect(used).toBeGreaterThan(PATTERN_BUDGET / 2);
    const second = await call("PUT", "/v1/agents/heavy-2", { name: "heavy-2", triggers: { patterns: big } }, as);
    expect(second.status).toBe(400);
    expect(second.json.error).toMatchObject({
      code: "PATTERN_BUDGET_EXCEEDED",
      details: { agent: "heavy-2", tenant_instructions: 2 * used, limit: PATTERN_BUDGET },
    });
    expect((await call("GET", "/v1/agents/heavy-2", undefined, as)).status).toBe(404);
    // Replacing an agent counts its new patterns instead of its old ones; a disabled one costs nothing.
    expect((await call("PUT", "/v1/agents/heavy-1", { name: "heavy-1", triggers: { patterns: big } }, as)).status).toBe(
      200,
    );
    const off = { name: "heavy-2", enabled: false, triggers: { patterns: big } };
    expect((await call("PUT", "/v1/agents/heavy-2", off, as)).status).toBe(201);
    for (const name of ["heavy-1", "heavy-2"]) await call("DELETE", `/v1/agents/${name}`, undefined, as);
    expect((await call("GET", "/v1/route/stats", undefined, as)).json.pattern_budget.used).toBe(0);
  });

  it("charges what a step costs: refuses non-ASCII patterns whose ASCII twins of the same size it admits, naming the costliest and why", async () => {
    const as = { key: BETA_KEY };
    // The same programs' sizes (k literals and the match); only the alphabet differs.
    const sizes = Array.from({ length: 100 }, (_, i) => 900 + i);
    const plain = { name: "plain", triggers: { patterns: sizes.map((k) => `a{${k}}`) } };
    expect((await call("PUT", "/v1/agents/plain", plain, as)).status).toBe(201);
    const used = (await call("GET", "/v1/route/stats", undefined, as)).json.pattern_budget.used;
    expect(used).toBe(sizes.reduce((sum, k) => sum + k + 1, 0));
    await call("DELETE", "/v1/agents/plain", undefined, as);
    const accents = { name: "accents", triggers: { patterns: sizes.map((k) => `é{${k}}`) } };
    const refused = await call("PUT", "/v1/agents/accents", accents, as);
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({
      code: "PATTERN_BUDGET_EXCEEDED",
      details: {
        agent: "accents",
        limit: PATTERN_BUDGET,
        pattern: "é{999}",
        instructions: 1000,
        costly: ["unicode_class"],
      },
    });
    expect(refused.json.error.details.charge).toBeGreaterThan(1000);
    expect(refused.json.error.details.agent_instructions).toBeGreaterThan(PATTERN_BUDGET);
    expect(refused.json.error.message).toContain("é{999}");
  });
});

describe("router versions", () => {
  it("names the registry version that decided, and answers with the version held while a newer one loads", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    onTestFinished(() => void vi.useRealTimers());
    const held = (await call("POST", "/v1/route", { input: "refund please", strategy: "rule" })).json;
    const version = await env.DB.prepare("SELECT version FROM registry_versions WHERE tenant = 'alpha'").first(
      "version",
    );
    expect(held.registry_version).toBe(version);
    // Another isolate's write: through the tenant's router object, which builds the next version.
    const router = env.ROUTERS.get(env.ROUTERS.idFromName("alpha")) as unknown as RouterRpc;
    const written = await router.putAgent(
      "alpha",
      AgentDefinition.parse({ name: "parcels", triggers: { keywords: ["parcel"] } }),
    );
    expect(written.ok).toBe(true);
    vi.setSystemTime(Date.now() + 60_000); // past the head cache's trust
    const first = (await call("POST", "/v1/route", { input: "my parcel", strategy: "rule", config: { threshold: 0 } }))
      .json;
    expect(first.registry_version).toBe(version);
    expect(first.agent).not.toBe("parcels");
    const next = await eventually(
      async () =>
        (await call("POST", "/v1/route", { input: "my parcel", strategy: "rule", config: { threshold: 0 } })).json,
      (decision: any) => decision.registry_version !== version,
      { what: "a route by the next registry version" },
    );
    expect(next.registry_version).toBe((version as number) + 1);
    expect(next.agent).toBe("parcels");
    await call("DELETE", "/v1/agents/parcels");
  });

  it("an isolate that holds a version loads only the shards that changed", async () => {
    const router = env.ROUTERS.get(env.ROUTERS.idFromName("alpha")) as unknown as RouterRpc;
    const all = await router.load("alpha", []);
    if (!all.ok) throw new Error(all.error.message);
    expect(all.value.shards.every((shard) => shard !== null)).toBe(true);
    const again = await router.load("alpha", all.value.stamps);
    if (!again.ok) throw new Error(again.error.message);
    expect(again.value.shards).toEqual(all.value.stamps.map(() => null));
    expect(again.value.build.pattern_budget).toBe(PATTERN_BUDGET);
  });
});
