import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { hourOf } from "../../src/quotas/windows";
import { tenantRpc } from "../../src/rpc/stubs";
import type { QuotaOverrides } from "../../src/schemas/quotas";
import { eventually } from "../eventually";
import { answer, fakeOpenAI } from "../fakes/openai";
import { llmServer } from "../fakes/server";
import { shardOf } from "../shards";
import type { TenantDO } from "../worker";
import { call, OPERATOR_KEY } from "./helpers";

/**
 * Each quota's refusal (docs/operations.md, Quotas): 429 QUOTA_EXCEEDED naming the limit, with
 * Retry-After, and nothing half-done — a refused session makes no object and no index row, a
 * refused run stores no message. Tenant gamma's limits are set low by the operator's overrides;
 * the request limit's own test is test/auth/request-limit.test.ts.
 */

const KEY = "gamma-test-key";
const TENANT = "gamma";
const gamma = (method: string, path: string, body?: unknown) => call(method, path, body, { key: KEY });
const tenantObject = () => env.TENANTS.get(env.TENANTS.idFromName(TENANT)) as unknown as DurableObjectStub<TenantDO>;

/** The operator sets gamma's overrides (PUT /v1/operator/tenants/gamma/quotas). */
async function limit(overrides: QuotaOverrides): Promise<void> {
  const set = await call("PUT", `/v1/operator/tenants/${TENANT}/quotas`, overrides, { key: OPERATOR_KEY });
  if (set.status !== 200) throw new Error(JSON.stringify(set.json));
}

/** Gamma's D1 rows: its sessions index and its session.created audit records (once flushed). */
async function d1Rows(): Promise<{ sessions: number; created: number }> {
  const db = await shardOf(TENANT);
  const [sessions, created] = await db.batch<{ n: number }>([
    db.prepare("SELECT COUNT(*) AS n FROM sessions WHERE tenant = ?1").bind(TENANT),
    db.prepare("SELECT COUNT(*) AS n FROM audit_log WHERE tenant = ?1 AND action = 'session.created'").bind(TENANT),
  ]);
  return { sessions: sessions!.results[0]!.n, created: created!.results[0]!.n };
}

/** Gamma's usage this hour and the last, summed. */
async function usage(): Promise<{ counts: Record<string, number>; refused: Record<string, number>; tokens: number }> {
  const hour = hourOf(Date.now());
  const read = await tenantRpc(env, TENANT).usage(TENANT, hour - 1, hour + 2);
  if (!read.ok) throw new Error(read.error.message);
  const counts: Record<string, number> = {};
  const refused: Record<string, number> = {};
  for (const h of read.value.hours) {
    for (const [k, n] of Object.entries(h.usage.counts)) counts[k] = (counts[k] ?? 0) + n;
    for (const [k, n] of Object.entries(h.usage.refused)) refused[k] = (refused[k] ?? 0) + n;
  }
  return { counts, refused, tokens: read.value.windows.tokens_today };
}

function expectRefusal(res: { status: number; json: any; headers: Headers }, limit: string, window: string | null) {
  expect(res.status).toBe(429);
  expect(res.json.error.code).toBe("QUOTA_EXCEEDED");
  expect(res.json.error.details).toMatchObject({ limit, window });
  const seconds = res.json.error.details.retry_after_s;
  if (window === null) {
    expect(seconds).toBeNull();
    expect(res.headers.get("Retry-After")).toBeNull();
  } else {
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(window === "minute" ? 60 : 86_400);
    expect(res.headers.get("Retry-After")).toBe(String(seconds));
  }
}

beforeAll(async () => {
  for (const agent of [
    { name: "desk", description: "Front desk", triggers: { keywords: ["desk"] } },
    { name: "thinker", description: "Answers with a model" },
    { name: "legal", description: "Legal", capabilities: [{ name: "contracts", proficiency: 0.9 }] },
    {
      name: "counter",
      description: "Counter",
      handoffs: [{ to: "legal", when: "auto", trigger: { type: "capability" } }],
    },
  ]) {
    const res = await gamma("PUT", `/v1/agents/${agent.name}`, agent);
    if (res.status >= 300) throw new Error(JSON.stringify(res.json));
  }
});

afterEach(async () => {
  await limit({});
  await runInDurableObject(tenantObject(), (instance: TenantDO) => instance.clock.unpin());
});

describe("sessions a day", () => {
  it("refuses the session past the limit with 429 and Retry-After; it makes no object and no index row", async () => {
    const before = await eventually(d1Rows, () => true, { what: "read" });
    const { counts } = await usage();
    await limit({ sessions_per_day: (counts.sessions ?? 0) + 2 });
    expect((await gamma("POST", "/v1/sessions", { agent: "desk" })).status).toBe(201);
    expect((await gamma("POST", "/v1/sessions", { input: "the desk please" })).status).toBe(201);
    const refused = await gamma("POST", "/v1/sessions", { agent: "desk" });
    expectRefusal(refused, "sessions_per_day", "day");
    expect((await gamma("POST", "/v1/sessions", { input: "the desk please" })).status).toBe(429);
    // The two made reach D1; nothing of the refused ones ever does.
    const rows = await eventually(d1Rows, (r) => r.created === before.created + 2, {
      what: "the two sessions' records in D1",
    });
    expect(rows).toEqual({ sessions: before.sessions + 2, created: before.created + 2 });
    const listed = await gamma("GET", "/v1/sessions?limit=200");
    expect(listed.json.items).toHaveLength(before.sessions + 2);
    const counted = await eventually(usage, (u) => u.refused.sessions_per_day === 2, { what: "two refusals counted" });
    expect(counted.counts.sessions).toBe((counts.sessions ?? 0) + 2);
  });

  it("gives the admission back when the session is not made after all", async () => {
    const { counts } = await usage();
    await limit({ sessions_per_day: (counts.sessions ?? 0) + 1 });
    expect((await gamma("POST", "/v1/sessions", { agent: "nobody" })).json.error.code).toBe("AGENT_NOT_FOUND");
    await eventually(usage, (u) => (u.counts.sessions ?? 0) === (counts.sessions ?? 0), {
      what: "the refused session's admission taken back",
    });
    expect((await gamma("POST", "/v1/sessions", { agent: "desk" })).status).toBe(201);
  });
});

describe("leases", () => {
  it("admits a burst of creations mostly from leases; the limit holds and each is counted once", async () => {
    // Alpha, untouched by the other tests here: its object's counts start at zero.
    const alpha = (method: string, path: string, body?: unknown) => call(method, path, body, { key: "alpha-test-key" });
    const object = env.TENANTS.get(env.TENANTS.idFromName("alpha")) as unknown as DurableObjectStub<TenantDO>;
    expect((await alpha("PUT", "/v1/agents/desk", { name: "desk", description: "Front desk" })).status).toBe(201);
    const set = await call("PUT", "/v1/operator/tenants/alpha/quotas", { sessions_per_day: 60 }, { key: OPERATOR_KEY });
    expect(set.status).toBe(200);
    const created = await Promise.all(
      Array.from({ length: 80 }, () => alpha("POST", "/v1/sessions", { agent: "desk" })),
    );
    expect(created.filter((r) => r.status === 201)).toHaveLength(60);
    expect(created.filter((r) => r.status === 429 && r.json.error.code === "QUOTA_EXCEEDED")).toHaveLength(20);
    expect(await runInDurableObject(object, (instance: TenantDO) => instance.admits)).toBeLessThan(80);
    const hour = hourOf(Date.now());
    await eventually(
      async () => {
        const read = await tenantRpc(env, "alpha").usage("alpha", hour - 1, hour + 2);
        if (!read.ok) throw new Error(read.error.message);
        return read.value.hours.reduce((n, h) => n + (h.usage.counts.sessions ?? 0), 0);
      },
      (sessions) => sessions === 60,
      { what: "the 60 sessions made counted, and only those" },
    );
  });
});

describe("runs a minute", () => {
  it("refuses the run past the limit; the refused message is not stored", async () => {
    // Pinned inside a minute: the two messages below are in the same window whatever the time.
    await runInDurableObject(tenantObject(), (instance: TenantDO) => instance.clock.pin(Date.now()));
    const session = (await gamma("POST", "/v1/sessions", { agent: "desk" })).json.id;
    const { counts } = await usage();
    await limit({ runs_per_minute: 1 });
    const first = await gamma("POST", `/v1/sessions/${session}/messages`, { role: "user", content: "hello" });
    expect(first.status).toBe(200);
    const history = (await gamma("GET", `/v1/sessions/${session}/messages`)).json.items.length;
    const audit = (await gamma("GET", `/v1/sessions/${session}/audit`)).json.items.length;
    const refused = await gamma("POST", `/v1/sessions/${session}/messages`, { role: "user", content: "again" });
    expectRefusal(refused, "runs_per_minute", "minute");
    expect((await gamma("GET", `/v1/sessions/${session}/messages`)).json.items).toHaveLength(history);
    expect((await gamma("GET", `/v1/sessions/${session}/audit`)).json.items).toHaveLength(audit);
    // Streamed, the same refusal, before any event.
    const streamed = await call(
      "POST",
      `/v1/sessions/${session}/messages`,
      { role: "user", content: "stream" },
      { key: KEY, headers: { Accept: "text/event-stream" } },
    );
    expectRefusal(streamed, "runs_per_minute", "minute");
    // A message that only stores (no run) is not a run.
    expect(
      (await gamma("POST", `/v1/sessions/${session}/messages`, { role: "user", content: "note", run: false })).status,
    ).toBe(201);
    const counted = await eventually(usage, (u) => u.refused.runs_per_minute === 2, { what: "two refusals counted" });
    expect(counted.counts.runs).toBe((counts.runs ?? 0) + 1);
  });

  it("refuses a message needing capabilities before its capability trigger hands the session on", async () => {
    const session = (await gamma("POST", "/v1/sessions", { agent: "counter" })).json.id;
    await limit({ runs_per_minute: 0 });
    const refused = await gamma("POST", `/v1/sessions/${session}/messages`, {
      role: "user",
      content: "review my contract",
      required_capabilities: ["contracts"],
    });
    expectRefusal(refused, "runs_per_minute", "minute");
    const after = (await gamma("GET", `/v1/sessions/${session}`)).json;
    expect(after.current_agent).toBe("counter");
    const actions = (await gamma("GET", `/v1/sessions/${session}/audit`)).json.items.map((r: any) => r.action);
    expect(actions).toEqual(["session.created"]);
  });

  it("gives a run's admission back when another run of the session started while it was asked", async () => {
    const session = (await gamma("POST", "/v1/sessions", { agent: "desk" })).json.id;
    const { counts } = await usage();
    const sent = await Promise.all(
      ["one", "two", "three"].map((content) =>
        gamma("POST", `/v1/sessions/${session}/messages`, { role: "user", content }),
      ),
    );
    const started = sent.filter((r) => r.status === 200 || r.status === 202);
    expect(started).toHaveLength(1);
    expect(sent.filter((r) => r.json.error?.code === "RUN_IN_PROGRESS")).toHaveLength(2);
    await eventually(usage, (u) => u.counts.runs === (counts.runs ?? 0) + 1, {
      what: "only the started run counted",
    });
  });
});

describe("model tokens a day", () => {
  it("refuses the next run once the day's tokens reach the limit", async () => {
    llmServer.use(fakeOpenAI({ baseUrl: "https://llm.test/v1", respond: () => answer("Thought about it.") }).handler);
    await gamma("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake-model" } });
    try {
      const session = (await gamma("POST", "/v1/sessions", { agent: "thinker" })).json.id;
      const { tokens } = await usage();
      // One model call answers 42 + 7 tokens (test/fakes/openai.ts): the first run reaches the limit.
      await limit({ model_tokens_per_day: tokens + 49 });
      const first = await gamma("POST", `/v1/sessions/${session}/messages`, { role: "user", content: "think" });
      expect(first.json.run.status).toBe("completed");
      await eventually(usage, (u) => u.tokens >= tokens + 49, { what: "the run's tokens counted" });
      const history = (await gamma("GET", `/v1/sessions/${session}/messages`)).json.items.length;
      const refused = await gamma("POST", `/v1/sessions/${session}/messages`, { role: "user", content: "more" });
      expectRefusal(refused, "model_tokens_per_day", "day");
      expect(refused.json.error.details).toMatchObject({ value: tokens + 49, used: tokens + 49 });
      expect((await gamma("GET", `/v1/sessions/${session}/messages`)).json.items).toHaveLength(history);
    } finally {
      await gamma("DELETE", "/v1/config/routing");
    }
  });
});

describe("agents and tools", () => {
  it("refuses a new agent past the count, with no Retry-After (no wait frees one); a replacement still goes", async () => {
    const held = (await gamma("GET", "/v1/agents")).json.items.length;
    await limit({ agents: held });
    const version = (await gamma("GET", "/v1/route/stats")).json.registry_version;
    const refused = await gamma("PUT", "/v1/agents/extra", { name: "extra", description: "One too many" });
    expectRefusal(refused, "agents", null);
    expect(refused.json.error.details).toEqual({
      limit: "agents",
      value: held,
      used: held,
      window: null,
      retry_after_s: null,
      resets_at: null,
    });
    expect((await gamma("GET", "/v1/agents/extra")).status).toBe(404);
    expect((await gamma("GET", "/v1/route/stats")).json.registry_version).toBe(version);
    expect((await gamma("PUT", "/v1/agents/desk", { name: "desk", description: "Front desk, again" })).status).toBe(
      200,
    );
    // Lowered below what it holds: still refused, and `used` says how many there are.
    await limit({ agents: held - 1 });
    expect(
      (await gamma("PUT", "/v1/agents/extra", { name: "extra", description: "d" })).json.error.details,
    ).toMatchObject({ value: held - 1, used: held });
  });

  it("refuses a new tool past the count, and stores nothing", async () => {
    await limit({ tools: 0 });
    const tool = { name: "lookup", kind: "client", description: "Looks things up", parameters: { type: "object" } };
    expectRefusal(await gamma("PUT", "/v1/tools/lookup", tool), "tools", null);
    expect((await gamma("GET", "/v1/tools/lookup")).status).toBe(404);
    await limit({ tools: 1 });
    expect((await gamma("PUT", "/v1/tools/lookup", tool)).status).toBe(201);
    expect((await gamma("PUT", "/v1/tools/lookup", { ...tool, description: "Looks up" })).status).toBe(200);
    const counted = await eventually(usage, (u) => (u.refused.tools ?? 0) >= 1 && (u.refused.agents ?? 0) >= 2, {
      what: "the refusals counted",
    });
    expect(counted.refused).toMatchObject({ tools: 1, agents: 2 });
  });
});

describe("A2A", () => {
  async function rpc(params: unknown) {
    const response = await (exports as any).default.fetch(
      new Request("http://relay.test/a2a", {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${KEY}`, "A2A-Version": "1.0" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "SendMessage", params }),
      }),
    );
    return { status: response.status, headers: response.headers, json: (await response.json()) as any };
  }
  const message = (text: string) => ({ message: { messageId: `m-${text}`, role: "ROLE_USER", parts: [{ text }] } });

  it("answers a refused new conversation with JSON-RPC error -32029, its data and Retry-After; no session", async () => {
    const before = await eventually(d1Rows, () => true, { what: "read" });
    const { counts } = await usage();
    await limit({ sessions_per_day: counts.sessions ?? 0 });
    const refused = await rpc(message("desk please"));
    expect(refused.status).toBe(200);
    expect(refused.json.error.code).toBe(-32029);
    expect(refused.json.error.message).toMatch(/sessions_per_day/);
    const retry = refused.json.error.data[1].retryDelay;
    expect(refused.json.error.data).toEqual([
      {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        reason: "QUOTA_EXCEEDED",
        domain: "relay",
        metadata: expect.objectContaining({ relay_code: "QUOTA_EXCEEDED", limit: "sessions_per_day", window: "day" }),
      },
      { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: expect.stringMatching(/^\d+s$/) },
    ]);
    expect(refused.headers.get("Retry-After")).toBe(retry.slice(0, -1));
    // A new conversation whose run would be refused is refused whole: no session without its run.
    await limit({ runs_per_minute: 0 });
    const noRun = await rpc(message("desk again"));
    expect(noRun.json.error.code).toBe(-32029);
    expect(noRun.json.error.data[0].metadata.limit).toBe("runs_per_minute");
    await limit({});
    expect((await rpc(message("desk at last"))).json.result.task.status.state).toBeDefined();
    const rows = await eventually(d1Rows, (r) => r.created === before.created + 1, { what: "one session in D1" });
    expect(rows.created).toBe(before.created + 1);
  });
});
