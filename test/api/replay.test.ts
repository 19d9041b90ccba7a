import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { routerRpc } from "../../src/rpc/stubs";
import { HistorySelection, REPLAY_UPLOAD_BYTES, REPLAY_UPLOAD_INPUTS } from "../../src/schemas/replay";
import { MAX_INPUT_BYTES } from "../../src/schemas/routing";
import { eventually } from "../eventually";
import { team } from "../routing/router-fixtures";
import { shardOf } from "../shards";
import { rpc, userMessage } from "./a2a-rpc";
import { BETA_KEY, call, putAgents } from "./helpers";
import { callTool } from "./mcp-rpc";

/**
 * `POST /v1/route/replay` and the routing history it reads, against the real router object and
 * D1: routed sessions are recorded, a draft's replay moves what it should and changes nothing.
 */

/** Routed to billing by the current team; the first two go to sales once sales has "refund". */
const RECORDED = ["a refund please", "refund", "why was I charged twice", "the app crashes when I open it"];

const salesWithRefund = (() => {
  const sales = team.find((a) => a.name === "sales")!;
  return { ...sales, triggers: { ...sales.triggers, keywords: [...sales.triggers.keywords, "refund"], priority: 100 } };
})();

const history = async () => {
  const rows = await routerRpc(env, "alpha").routeHistory(HistorySelection.parse({ limit: 10_000 }));
  if (!rows.ok) throw new Error(JSON.stringify(rows.error));
  return rows.value;
};

const historyHolds = (n: number, what: string) =>
  eventually(history, (rows) => rows.length === n, { what: `the history holds ${n} rows (${what})` });

async function routedSession(input: string): Promise<string> {
  const res = await call("POST", "/v1/sessions", { input });
  if (res.status !== 201) throw new Error(JSON.stringify(res.json));
  return res.json.id;
}

const replay = (body: unknown) => call("POST", "/v1/route/replay", body);

/** The recorded sessions: their runs go on writing audit records while the tests run. */
const recordedSessions: string[] = [];

beforeAll(async () => {
  await putAgents(team);
  for (const input of RECORDED) recordedSessions.push(await routedSession(input));
  await historyHolds(RECORDED.length, "the routed sessions");
});

describe("the routing history", () => {
  it("keeps each routed session: its input, the decision and the registry version", async () => {
    // Neither a dry run nor a session with its agent named is recorded.
    await call("POST", "/v1/route", { input: "refund" });
    await call("POST", "/v1/sessions", { agent: "sales", input: "pricing" });
    const rows = await history();
    expect(rows.map((r) => r.input)).toEqual(RECORDED);
    const version = (await call("GET", "/v1/route/stats")).json.registry_version;
    expect(rows[0]).toMatchObject({ agent: "billing", method: "rule", registry_version: version });
    expect(rows[0]!.session_id).toMatch(/^ses_/);
    expect(rows[0]!.confidence).toBeGreaterThanOrEqual(80);
  });
});

describe("POST /v1/route/replay", () => {
  it("moves exactly the recorded inputs a new keyword wins, from billing to sales, and lists them", async () => {
    const { status, json } = await replay({ draft: { agents: [salesWithRefund] } });
    expect(status).toBe(200);
    expect(json.source).toBe("history");
    expect(json.totals).toMatchObject({ inputs: 4, replayed: 4, complete: true, moved: 2, llm_calls: 0 });
    expect(json.moves).toEqual([{ from: "billing", to: "sales", count: 2, examples: ["a refund please", "refund"] }]);
    expect(json.fallback).toEqual({ entered: { count: 0, examples: [] }, left: { count: 0, examples: [] } });
    expect(json.labelled).toBeUndefined();
  });

  it("takes the draft's agents as Markdown agent files too, read as the registry write reads them", async () => {
    const { instructions, ...front } = salesWithRefund as typeof salesWithRefund & { instructions?: string };
    // JSON is YAML: the front matter as a flow mapping.
    const markdown = `---\n${JSON.stringify(front)}\n---\n${instructions ?? ""}\n`;
    const asFile = await replay({ draft: { files: [{ name: "sales", markdown }] } });
    expect(asFile.status).toBe(200);
    expect(asFile.json.moves).toEqual([
      { from: "billing", to: "sales", count: 2, examples: ["a refund please", "refund"] },
    ]);
    const misnamed = await replay({ draft: { files: [{ name: "billing", markdown }] } });
    expect([misnamed.status, misnamed.json.error.code, misnamed.json.error.details.issues[0].path]).toEqual([
      400,
      "VALIDATION_FAILED",
      "draft.files.0.name",
    ]);
    const bad = await replay({ draft: { files: [{ name: "sales", markdown: "no front matter" }] } });
    expect([bad.status, bad.json.error.code]).toEqual([400, "INVALID_AGENT_FILE"]);
  });

  it("filters the history by agent and takes the newest N", async () => {
    const byAgent = await replay({ draft: {}, history: { agent: "technical" } });
    expect(byAgent.json.totals.inputs).toBe(1);
    const newest = await replay({ draft: { agents: [salesWithRefund] }, history: { limit: 2 } });
    expect(newest.json.totals).toMatchObject({ inputs: 2, moved: 0 });
    const none = await replay({ draft: {}, history: { since: "2999-01-01T00:00:00Z" } });
    expect(none.json.totals).toMatchObject({ inputs: 0, replayed: 0, moved: 0 });
  });

  it("scores a labelled set before and after", async () => {
    const { status, json } = await replay({
      draft: { agents: [salesWithRefund] },
      inputs: [
        { input: "a refund please", label: "sales" },
        { input: "refund", label: "sales" },
        { input: "the app crashes when I open it", label: "technical" },
        { input: "why was I charged twice", label: "sales" },
        { input: "hello there" },
      ],
    });
    expect(status).toBe(200);
    expect(json.source).toBe("inputs");
    expect(json.labelled).toEqual({
      count: 4,
      before: { accuracy: 0.25, coverage: 1, precision: 0.25 },
      after: { accuracy: 0.75, coverage: 1, precision: 0.75 },
    });
  });

  it("removing an agent and raising the threshold send inputs to the LLM, which is not called unless asked", async () => {
    const { json } = await replay({ draft: { remove: ["technical"], config: { threshold: 100 } } });
    expect(json.totals.llm_calls).toBe(0);
    expect(json.totals.would_ask_llm.current).toBe(0);
    expect(json.totals.would_ask_llm.draft).toBeGreaterThan(0);
    expect(json.moves.some((m: { from: string; to: string }) => m.from === "technical" && m.to === "@llm")).toBe(true);
    // With calls allowed, the LLM tier (the offline local provider here) decides, up to max_calls.
    const asked = await replay({ draft: { config: { threshold: 100 } }, llm: { max_calls: 2 } });
    expect(asked.json.totals.llm_calls).toBe(2);
  });

  it("changes nothing: registry, audit, agents and history stay as they were", async () => {
    const state = async () =>
      Promise.all([
        env.DB.prepare("SELECT version, stamp FROM registry_versions WHERE tenant = 'alpha'").first(),
        // Records of the recorded sessions' own runs may land at any time; a replay's would not be theirs.
        (await shardOf("alpha"))
          .prepare(
            `SELECT count(*) AS n FROM audit_log WHERE tenant = 'alpha' AND (session_id IS NULL OR session_id NOT IN (${recordedSessions.map(() => "?").join(",")}))`,
          )
          .bind(...recordedSessions)
          .first("n"),
        env.DB.prepare("SELECT group_concat(name || ':' || updated_at) AS a FROM agents WHERE tenant = 'alpha'").first(
          "a",
        ),
        history(),
      ]);
    const before = await state();
    expect(
      (await replay({ draft: { agents: [salesWithRefund], remove: ["archive"], config: { threshold: 60 } } })).status,
    ).toBe(200);
    expect((await replay({ draft: {}, inputs: [{ input: "refund", label: "billing" }] })).status).toBe(200);
    expect(await state()).toEqual(before);
  });

  it("refuses a draft the registry write would refuse, with the same codes, changing nothing", async () => {
    const bad = [
      [{ agents: [{ name: "x", triggers: { patterns: ["(?<=a)b"] } }] }, 400, "INVALID_PATTERN"],
      [
        {
          agents: [
            {
              name: "x",
              handoffs: [{ to: "boss", when: "auto", trigger: { type: "condition", expression: "refund >> 5" } }],
            },
          ],
        },
        400,
        "INVALID_EXPRESSION",
      ],
      [{ agents: [{ name: "Not A Name" }] }, 400, "VALIDATION_FAILED"],
      [{ agents: [{ name: "x" }, { name: "x" }] }, 400, "VALIDATION_FAILED"],
      [{ agents: [{ name: "sales" }], remove: ["sales"] }, 400, "VALIDATION_FAILED"],
      [{ remove: ["nobody"] }, 404, "AGENT_NOT_FOUND"],
      [{ config: { fallback: "default_agent" } }, 400, "INVALID_CONFIG"],
      [{ config: { threshold: 101 } }, 400, "VALIDATION_FAILED"],
    ] as const;
    for (const [draft, status, code] of bad) {
      const res = await replay({ draft });
      expect([res.status, res.json.error?.code], JSON.stringify(draft)).toEqual([status, code]);
    }
  });

  it("refuses drafts whose patterns pass the tenant's pattern budget", async () => {
    // One agent of 100 such patterns takes more than half the budget; two pass it.
    const big = Array.from({ length: 100 }, (_, i) => `(.*a){${120 + i}}`);
    const res = await replay({
      draft: {
        agents: [
          { name: "heavy-1", triggers: { patterns: big } },
          { name: "heavy-2", triggers: { patterns: big } },
        ],
      },
    });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: "PATTERN_BUDGET_EXCEEDED", details: { agent: "heavy-2" } });
  });

  it("caps what it reads: history size, inputs' count and bytes, the body", async () => {
    const cases: [unknown, number, string][] = [
      [{ draft: {}, history: { limit: 10_001 } }, 400, "VALIDATION_FAILED"],
      [{ draft: {}, history: {}, inputs: [{ input: "a" }] }, 400, "VALIDATION_FAILED"],
      [{ draft: {}, inputs: [] }, 400, "VALIDATION_FAILED"],
      [
        { draft: {}, inputs: Array.from({ length: REPLAY_UPLOAD_INPUTS + 1 }, () => ({ input: "a" })) },
        400,
        "VALIDATION_FAILED",
      ],
      [{ draft: {}, inputs: [{ input: "a".repeat(MAX_INPUT_BYTES + 1) }] }, 413, "PAYLOAD_TOO_LARGE"],
      [
        {
          draft: {},
          inputs: Array.from({ length: Math.ceil(REPLAY_UPLOAD_BYTES / MAX_INPUT_BYTES) + 1 }, () => ({
            input: "a".repeat(MAX_INPUT_BYTES),
          })),
        },
        413,
        "PAYLOAD_TOO_LARGE",
      ],
      [{ draft: {}, llm: { max_calls: 21 } }, 400, "VALIDATION_FAILED"],
      [{}, 400, "VALIDATION_FAILED"],
    ];
    for (const [body, status, code] of cases) {
      const res = await replay(body);
      expect([res.status, res.json.error?.code]).toEqual([status, code]);
    }
    const invalid = await call("POST", "/v1/route/replay", "{not json");
    expect(invalid.json.error.code).toBe("INVALID_JSON");
    const huge = await call(
      "POST",
      "/v1/route/replay",
      JSON.stringify({ draft: {}, pad: "a".repeat(17 * 1024 * 1024) }),
    );
    expect([huge.status, huge.json.error.code]).toEqual([413, "PAYLOAD_TOO_LARGE"]);
  });
});

describe("recording off, and clearing", () => {
  it("records nothing while record_inputs is false", async () => {
    const before = (await history()).length;
    expect((await call("PUT", "/v1/config/routing", { record_inputs: false })).status).toBe(200);
    await routedSession("refund for the quiet session");
    expect((await call("PUT", "/v1/config/routing", { record_inputs: true })).status).toBe(200);
    await routedSession("why was I charged twice again");
    const rows = await historyHolds(before + 1, "the session routed with recording on");
    expect(rows.map((r) => r.input)).not.toContain("refund for the quiet session");
    expect(rows.at(-1)!.input).toBe("why was I charged twice again");
  });

  it("DELETE /v1/route/history clears it, audited", async () => {
    const held = (await history()).length;
    expect(held).toBeGreaterThan(0);
    const res = await call("DELETE", "/v1/route/history");
    expect(res).toMatchObject({ status: 200, json: { deleted: held } });
    expect(await history()).toEqual([]);
    const audit = await (await shardOf("alpha"))
      .prepare("SELECT actor, session_id FROM audit_log WHERE tenant = 'alpha' AND action = 'route.history_cleared'")
      .all();
    expect(audit.results).toEqual([{ actor: "api", session_id: null }]);
    const replayed = await replay({ draft: {} });
    expect(replayed.json.totals.inputs).toBe(0);
    // A second clear has nothing to delete.
    expect((await call("DELETE", "/v1/route/history")).json).toEqual({ deleted: 0 });
  });

  it("clears nothing when the audit record cannot be written: 503, the rows stay", async () => {
    const beta = routerRpc(env, "beta");
    await routedSession("why was I charged twice");
    const recorded = await eventually(history, (rows) => rows.length > 0, { what: "a row to copy" });
    expect((await beta.recordRoute({ ...recorded[0]!, session_id: "ses_beta" })).ok).toBe(true);
    // Beta's audit trail is being moved to another shard: its writes wait until the copy is done.
    await env.DB.prepare(
      "INSERT OR REPLACE INTO tenant_shards (tenant, shard, phase, other, updated_at) VALUES ('beta', 0, 'copying', 1, ?1)",
    )
      .bind(new Date().toISOString())
      .run();
    const res = await call("DELETE", "/v1/route/history", undefined, { key: BETA_KEY });
    expect([res.status, res.json.error.code, res.json.error.details]).toEqual([
      503,
      "DEPENDENCY_UNAVAILABLE",
      { reason: "audit" },
    ]);
    const kept = await beta.routeHistory(HistorySelection.parse({}));
    expect(kept.ok && kept.value.map((r) => r.session_id)).toEqual(["ses_beta"]);
  });
});

describe("the other front doors", () => {
  it("records the sessions the A2A endpoint and the MCP server route, as POST /v1/sessions does", async () => {
    expect((await call("DELETE", "/v1/route/history")).status).toBe(200);
    const a2a = await rpc("/a2a", "SendMessage", userMessage("a refund please"));
    expect(a2a.result?.task?.contextId).toMatch(/^ses_/);
    const mcp = await callTool("modern", "send_message", { content: "why was I charged twice" });
    expect(mcp.result.isError).not.toBe(true);
    const rows = await eventually(history, (held) => held.length === 2, { what: "both front doors' sessions" });
    expect(rows.map((r) => [r.input, r.agent])).toEqual([
      ["a refund please", "billing"],
      ["why was I charged twice", "billing"],
    ]);
    expect(rows[0]!.session_id).toBe(a2a.result.task.contextId);
  });
});
