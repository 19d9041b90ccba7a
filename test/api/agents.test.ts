import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../src/app";
import { expectForgedCursorsRefused } from "./forged-cursors";
import { ALPHA_KEY, BETA_KEY, call } from "./helpers";

const billing = {
  name: "billing",
  title: "Billing",
  description: "Invoices, refunds and payments",
  triggers: { keywords: ["refund", "invoice"], patterns: ["charged\\s+twice"], priority: 80 },
  handoffs: ["technical", { to: "supervisor", filter: { redact_pii: true } }],
};

describe("agent registry API", () => {
  it("creates (201), replaces (200) and reads an agent with defaults filled in", async () => {
    const created = await call("PUT", "/v1/agents/billing", billing);
    expect(created.status).toBe(201);
    expect(created.json.definition).toMatchObject({ name: "billing", kind: "llm", enabled: true });
    // Capacity is opt-in: no limit unless one is given.
    expect(created.json.definition).not.toHaveProperty("max_concurrent_sessions");
    expect(created.json.definition.handoffs[0]).toEqual({
      to: "technical",
      when: "manual",
      include_context: true,
      requires_approval: false,
    });
    const replaced = await call("PUT", "/v1/agents/billing", { ...billing, description: "Money matters" });
    expect(replaced.status).toBe(200);
    expect(replaced.json.created_at).toBe(created.json.created_at);
    const read = await call("GET", "/v1/agents/billing");
    expect(read.json.definition.description).toBe("Money matters");
  });

  it("accepts a Markdown agent file with front matter; the body becomes the instructions", async () => {
    const file = "---\nname: notes\ntitle: Notes\ntriggers:\n  keywords: [memo]\n---\nYou keep notes.\n";
    const put = await call("PUT", "/v1/agents/notes", file, { headers: { "Content-Type": "text/markdown" } });
    expect(put.status).toBe(201);
    expect(put.json.definition).toMatchObject({
      name: "notes",
      instructions: "You keep notes.",
      triggers: { keywords: ["memo"] },
    });
  });

  it("pages through agents with an opaque cursor", async () => {
    for (const name of ["page-a", "page-b", "page-c"]) await call("PUT", `/v1/agents/${name}`, { name });
    const seen: string[] = [];
    let cursor: string | null = "";
    while (cursor !== null) {
      const page = await call("GET", `/v1/agents?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      expect(page.json.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.json.items.map((a: { definition: { name: string } }) => a.definition.name));
      cursor = page.json.next_cursor;
    }
    expect(seen.filter((n) => n.startsWith("page-"))).toEqual(["page-a", "page-b", "page-c"]);
    expect(new Set(seen).size).toBe(seen.length);
    await expectForgedCursorsRefused("/v1/agents?limit=2", (await call("GET", "/v1/agents?limit=2")).json.next_cursor);
  });

  it("deletes an agent (204), then 404s it", async () => {
    await call("PUT", "/v1/agents/gone", { name: "gone" });
    expect((await call("DELETE", "/v1/agents/gone")).status).toBe(204);
    expect((await call("GET", "/v1/agents/gone")).json.error.code).toBe("AGENT_NOT_FOUND");
    expect((await call("DELETE", "/v1/agents/gone")).status).toBe(404);
  });
});

describe("GET /v1/agents/:name/load", () => {
  it("shows each session's lease and the capacity; over every shard of a hot agent; 404 for no such agent", async () => {
    await call("PUT", "/v1/agents/desk-load", {
      name: "desk-load",
      description: "Small desk",
      max_concurrent_sessions: 3,
    });
    await call("PUT", "/v1/agents/hot-load", {
      name: "hot-load",
      description: "A hot agent",
      max_concurrent_sessions: 600,
    });
    await call("PUT", "/v1/agents/open-load", { name: "open-load", description: "No limit" });
    const small = [
      await call("POST", "/v1/sessions", { agent: "desk-load" }),
      await call("POST", "/v1/sessions", { agent: "desk-load" }),
    ];
    const desk = await call("GET", "/v1/agents/desk-load/load");
    expect(desk.status).toBe(200);
    expect(desk.json).toMatchObject({ status: "active", max_concurrent_sessions: 3, active_leases: 2 });
    expect(desk.json.leases.map((l: { session_id: string }) => l.session_id).sort()).toEqual(
      small.map((s) => s.json.id).sort(),
    );
    // 600 sessions are three shards of 200: the load is their sum, each lease naming its shard.
    const hot = await Promise.all(Array.from({ length: 6 }, () => call("POST", "/v1/sessions", { agent: "hot-load" })));
    const load = await call("GET", "/v1/agents/hot-load/load");
    expect(load.json).toMatchObject({ max_concurrent_sessions: 600, active_leases: 6 });
    expect(load.json.leases.every((l: { lease_id: string }) => /~s[0-2]of3$/.test(l.lease_id))).toBe(true);
    expect(load.json.leases.map((l: { session_id: string }) => l.session_id).sort()).toEqual(
      hot.map((s) => s.json.id).sort(),
    );
    expect((await call("GET", "/v1/agents/open-load/load")).json).toEqual({
      status: "active",
      max_concurrent_sessions: null,
      active_leases: 0,
      leases: [],
    });
    expect(await call("GET", "/v1/agents/no-such-agent/load")).toMatchObject({
      status: 404,
      json: { error: { code: "AGENT_NOT_FOUND" } },
    });
  });
});

describe("agent registry validation: a clear code and nothing stored", () => {
  async function expectRefused(
    name: string,
    body: unknown,
    status: number,
    code: string,
    headers?: Record<string, string>,
  ) {
    const response = await call("PUT", `/v1/agents/${name}`, body, headers ? { headers } : {});
    expect(response.status).toBe(status);
    expect(response.json.error.code).toBe(code);
    expect((await call("GET", `/v1/agents/${name}`)).status).toBe(404);
    return response.json.error;
  }

  it("malformed JSON → 400 INVALID_JSON", async () => {
    await expectRefused("broken", '{"name": "broken",', 400, "INVALID_JSON");
  });

  it("wrong types and unknown fields → 400 VALIDATION_FAILED naming each field", async () => {
    const error = await expectRefused(
      "typo",
      { name: "typo", triggers: { keywords: "refund", priorty: 5 }, colour: "red" },
      400,
      "VALIDATION_FAILED",
    );
    const paths = error.details.issues.map((i: { path: string }) => i.path);
    expect(paths).toContain("triggers.keywords");
    expect(paths).toContain("triggers");
    expect(paths).toContain("(root)");
  });

  it("names that are not slugs, or that disagree with the URL → 400", async () => {
    expect((await call("PUT", "/v1/agents/Bad%20Name", { name: "Bad Name" })).json.error.code).toBe(
      "VALIDATION_FAILED",
    );
    await expectRefused("one", { name: "two" }, 400, "VALIDATION_FAILED");
  });

  it("limits: 501 keywords, 101 patterns, 51 handoffs, priority 101 → 400", async () => {
    const many = (n: number, f: (i: number) => unknown) => Array.from({ length: n }, (_, i) => f(i));
    await expectRefused(
      "kw",
      { name: "kw", triggers: { keywords: many(501, (i) => `k${i}`) } },
      400,
      "VALIDATION_FAILED",
    );
    await expectRefused(
      "pt",
      { name: "pt", triggers: { patterns: many(101, (i) => `p${i}`) } },
      400,
      "VALIDATION_FAILED",
    );
    await expectRefused("hf", { name: "hf", handoffs: many(51, (i) => `agent-${i}`) }, 400, "VALIDATION_FAILED");
    await expectRefused("pr", { name: "pr", triggers: { priority: 101 } }, 400, "VALIDATION_FAILED");
  });

  it("a pattern that does not compile, or needs backtracking → 400 INVALID_PATTERN naming it and the construct", async () => {
    const bad = await expectRefused(
      "rx",
      { name: "rx", triggers: { patterns: ["ok\\d+", "(unclosed"] } },
      400,
      "INVALID_PATTERN",
    );
    expect(bad.message).toContain("(unclosed");
    const backref = await expectRefused(
      "br",
      { name: "br", triggers: { patterns: ["fine", "(a)\\1"] } },
      400,
      "INVALID_PATTERN",
    );
    expect(backref.details.patterns).toEqual([
      { index: 1, pattern: "(a)\\1", reason: expect.stringMatching(/^uses a backreference .* needs backtracking/) },
    ]);
    const look = await expectRefused(
      "la",
      { name: "la", triggers: { patterns: ["(?=a)b", "(?<!x)y"] } },
      400,
      "INVALID_PATTERN",
    );
    expect(look.details.patterns.map((p: { reason: string }) => p.reason)).toEqual([
      expect.stringMatching(/^uses lookaround/),
      expect.stringMatching(/^uses lookaround/),
    ]);
    expect(look.message).toContain("(?=a)b");
  });

  it("a webhook agent without an endpoint, or a handoff to itself → 400", async () => {
    await expectRefused("hook", { name: "hook", kind: "webhook" }, 400, "VALIDATION_FAILED");
    await expectRefused("loop", { name: "loop", handoffs: ["loop"] }, 400, "VALIDATION_FAILED");
  });

  it("an agent file with no front matter or invalid YAML → 400 INVALID_AGENT_FILE", async () => {
    const md = { "Content-Type": "text/markdown" };
    await expectRefused("nofm", "just instructions", 400, "INVALID_AGENT_FILE", md);
    await expectRefused("badyaml", "---\nname: [unclosed\n---\nbody", 400, "INVALID_AGENT_FILE", md);
    const wrong = await expectRefused(
      "wrongfield",
      "---\nname: wrongfield\nkind: robot\n---\n",
      400,
      "INVALID_AGENT_FILE",
      md,
    );
    expect(wrong.details.issues[0].path).toBe("kind");
  });

  it("a body over 4 MiB → 413 PAYLOAD_TOO_LARGE", async () => {
    await expectRefused(
      "huge",
      { name: "huge", instructions: "x".repeat(4 * 1024 * 1024 + 1) },
      413,
      "PAYLOAD_TOO_LARGE",
    );
  });

  it("a chunked body (no Content-Length) past 4 MiB → 413 too, read no further than the limit", async () => {
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 160) return controller.close();
        controller.enqueue(sent === 0 ? new TextEncoder().encode('{"name":"chunky","instructions":"') : chunk);
        sent++;
      },
    });
    const response = await (exports as any).default.fetch("http://relay.test/v1/agents/chunky", {
      method: "PUT",
      headers: { Authorization: `Bearer ${ALPHA_KEY}`, "Content-Type": "application/json" },
      body,
      duplex: "half",
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as any).error).toMatchObject({
      code: "PAYLOAD_TOO_LARGE",
      details: { limit_bytes: 4 * 1024 * 1024 },
    });
    expect((await call("GET", "/v1/agents/chunky")).status).toBe(404);
  });
});

describe("auth", () => {
  it("refuses a missing or wrong key with 401 and keeps tenants apart", async () => {
    expect((await call("GET", "/v1/agents", undefined, { key: null })).status).toBe(401);
    expect((await call("GET", "/v1/agents", undefined, { key: "wrong-key-123" })).json.error.code).toBe("UNAUTHORIZED");
    await call("PUT", "/v1/agents/billing", billing);
    const other = await call("GET", "/v1/agents/billing", undefined, { key: BETA_KEY });
    expect(other.status).toBe(404);
    const list = await call("GET", "/v1/agents", undefined, { key: BETA_KEY });
    expect(list.json.items.map((a: { definition: { name: string } }) => a.definition.name)).not.toContain("billing");
  });

  it("fails closed: no keys configured → 503 AUTH_NOT_CONFIGURED, even with a key presented", async () => {
    for (const keys of [undefined, "", "malformed-entry"]) {
      const response = await app.fetch(
        new Request("http://relay.test/v1/agents", { headers: { Authorization: "Bearer alpha-test-key" } }),
        { ...env, RELAY_API_KEYS: keys },
      );
      expect(response.status).toBe(503);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("AUTH_NOT_CONFIGURED");
    }
  });
});
