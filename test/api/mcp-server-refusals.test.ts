import { env } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { BETA_KEY, call } from "./helpers";
import { setUpTeam } from "./mcp-fixtures";
import { callTool, type Era, LEGACY, MODERN, other, post, request } from "./mcp-rpc";

/**
 * Relay's MCP server (docs/mcp-server.md) refusing: requests without the key, agents the tenant
 * does not expose (mcp.expose), arguments that do not fit and Relay's own refusals as tool
 * errors, malformed JSON-RPC as the SDK's protocol errors — in both revisions, never a 5xx.
 */

const eras: Era[] = ["modern", "legacy"];
const structured = (result: any) => result.structuredContent;

beforeAll(setUpTeam);

afterEach(async () => {
  await call("DELETE", "/v1/config/mcp");
});

describe("auth", () => {
  it("no key or a wrong key is the usual JSON 401, and nothing is written", async () => {
    // Sessions are counted when the tenant's object admits them, before anything else is made.
    const sessions = async () => (await call("GET", "/v1/usage")).json.totals.sessions;
    const before = await sessions();
    for (const key of [null, "not-a-key"]) {
      const res = await post(
        {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "send_message", arguments: { agent: "billing", content: "hi" } },
        },
        { key, headers: { "MCP-Protocol-Version": LEGACY } },
      );
      expect(res.status).toBe(401);
      expect(res.json.error.code).toBe("UNAUTHORIZED");
      expect((await other("GET", key)).status).toBe(401);
    }
    expect(await sessions()).toBe(before);
    // The same call with the key makes one: the count above can move.
    await callTool("legacy", "start_session", { agent: "billing" });
    expect(await sessions()).toBe(before + 1);
  });

  it("another tenant's key sees its own team (none here)", async () => {
    const res = await request("modern", "tools/call", { name: "list_agents", arguments: {} }, { key: BETA_KEY });
    expect(res.response.result.structuredContent).toEqual({ agents: [], next_cursor: null });
  });
});

describe("mcp.expose", () => {
  it("GET, PUT and DELETE /v1/config/mcp; a bad name is VALIDATION_FAILED and nothing changes", async () => {
    expect((await call("GET", "/v1/config/mcp")).json).toEqual({ expose: null, updated_at: null });
    const put = await call("PUT", "/v1/config/mcp", { expose: ["clerk", "billing", "billing"] });
    expect(put.status).toBe(200);
    expect(put.json).toEqual({ expose: ["billing", "clerk"], updated_at: expect.any(String) });
    const bad = await call("PUT", "/v1/config/mcp", { expose: ["Not A Slug"] });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe("VALIDATION_FAILED");
    expect((await call("GET", "/v1/config/mcp")).json.expose).toEqual(["billing", "clerk"]);
    expect((await call("GET", "/v1/config/mcp", undefined, { key: BETA_KEY })).json.expose).toBeNull();
    expect((await call("DELETE", "/v1/config/mcp")).json).toEqual({ expose: null, updated_at: null });
  });

  describe.each(eras)("with billing and clerk exposed (%s)", (era) => {
    beforeAll(async () => {
      await call("PUT", "/v1/config/mcp", { expose: ["billing", "clerk"] });
    });
    // The file's afterEach clears the settings: each test sets them again.
    const expose = () => call("PUT", "/v1/config/mcp", { expose: ["billing", "clerk"] });

    it("unexposed agents are not listed, as tools or resources, and do not read", async () => {
      await expose();
      const agents = structured((await callTool(era, "list_agents", {})).result).agents;
      expect(agents.map((a: { name: string }) => a.name)).toEqual(["billing", "clerk"]);
      const list = await request(era, "resources/list");
      const uris = list.response.result.resources.map((r: { uri: string }) => r.uri);
      expect(uris).not.toContain("relay://agents/triage");
      expect(uris).toContain("relay://agents/billing");
      const read = await request(era, "resources/read", { uri: "relay://agents/secret-desk" });
      expect(read.response.error.message).toMatch(/AGENT_NOT_FOUND/);
    });

    it("route never answers with an unexposed agent, nor names it", async () => {
      await expose();
      const plain = await call("POST", "/v1/route", { input: "chargeback dispute on my card" });
      expect(plain.json.agent).toBe("secret-desk");
      const { result } = await callTool(era, "route", { input: "chargeback dispute on my card" });
      expect(structured(result)).toMatchObject({
        agent: null,
        method: "fallback",
        fallback: { strategy: "prompt_user", agents: [{ name: "billing" }, { name: "clerk" }] },
      });
      expect(JSON.stringify(result)).not.toContain("secret-desk");
      const billing = structured((await callTool(era, "route", { input: "I want a refund" })).result);
      expect(billing.agent).toBe("billing");
    });

    it("start_session and send_message to an unexposed agent are refused, nothing made", async () => {
      await expose();
      const before = await env.DB.prepare("SELECT COUNT(*) AS n FROM audit_log").first<{ n: number }>();
      for (const [tool, args] of [
        ["start_session", { agent: "triage" }],
        ["send_message", { agent: "secret-desk", content: "hello" }],
        ["start_session", { input: "chargeback dispute" }],
      ] as const) {
        const { result } = await callTool(era, tool, args);
        expect(result.isError).toBe(true);
        const code = structured(result).error.code;
        expect(["AGENT_UNAVAILABLE", "NO_ROUTE"]).toContain(code);
        if (code === "AGENT_UNAVAILABLE")
          expect(structured(result).error.details).toMatchObject({ reason: "not_exposed" });
        expect(result.content[0].text).toMatch(new RegExp(`^${code}: `));
      }
      expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM audit_log").first<{ n: number }>()).toEqual(before);
    });

    it("send_message to a session whose current agent is unexposed is refused", async () => {
      const created = await call("POST", "/v1/sessions", { agent: "triage" });
      await expose();
      const { result } = await callTool(era, "send_message", { session_id: created.json.id, content: "hi" });
      expect(structured(result).error).toMatchObject({ code: "AGENT_UNAVAILABLE", details: { agent: "triage" } });
    });
  });
});

describe.each(eras)("bad input (%s)", (era) => {
  it("arguments that do not fit are VALIDATION_FAILED with issues, as a tool error", async () => {
    for (const [tool, args, path] of [
      ["route", { input: 5 }, "input"],
      ["route", {}, "input"],
      ["send_message", { content: "" }, "content"],
      ["start_session", { agent: "Not A Slug" }, "agent"],
      ["answer_inbox", { inbox_id: "inb_x", decision: "maybe" }, "decision"],
      ["answer_inbox", { inbox_id: "inb_x" }, "reply"],
      ["list_agents", { limit: 0 }, "limit"],
      ["get_session", { session_id: "s", extra: 1 }, "(root)"],
    ] as const) {
      const { result } = await callTool(era, tool, args);
      expect(result.isError, `${tool} ${JSON.stringify(args)}`).toBe(true);
      expect(structured(result).error).toMatchObject({
        code: "VALIDATION_FAILED",
        details: { issues: expect.arrayContaining([expect.objectContaining({ path })]) },
      });
    }
  });

  it("Relay's refusals are tool errors with their codes", async () => {
    const cases = [
      ["get_session", { session_id: "ses_nothing" }, "SESSION_NOT_FOUND"],
      ["answer_inbox", { inbox_id: "inb_nothing", reply: "x" }, "INBOX_ITEM_NOT_FOUND"],
      ["start_session", { agent: "nobody" }, "AGENT_NOT_FOUND"],
      ["start_session", {}, "VALIDATION_FAILED"],
      ["send_message", { session_id: "ses_nothing", agent: "billing", content: "x" }, "VALIDATION_FAILED"],
      ["send_message", { session_id: "ses_nothing", content: "x" }, "SESSION_NOT_FOUND"],
      ["route", { input: "x".repeat(40_000) }, "PAYLOAD_TOO_LARGE"],
    ] as const;
    for (const [tool, args, code] of cases) {
      const { result, answer: res } = await callTool(era, tool, args);
      expect(res.status).toBe(200);
      expect(result.isError, tool).toBe(true);
      expect(structured(result).error.code).toBe(code);
    }
  });

  it("an unknown tool and malformed JSON-RPC are the SDK's protocol errors, never a 500", async () => {
    const unknown = await request(era, "tools/call", { name: "drop_tables", arguments: {} });
    expect(unknown.response.error).toMatchObject({ code: -32602 });
    for (const body of ["{not json", "[]", JSON.stringify({ jsonrpc: "1.0", id: 1, method: "ping" })]) {
      const res = await post(body, { headers: era === "modern" ? { "MCP-Protocol-Version": MODERN } : {} });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.json.error.code).toBeLessThan(0);
    }
  });
});
