import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type AuditQuery, auditPageQuery, queryAudit, ulidFloor, writeAuditBatch } from "../../src/audit/d1-store";
import { auditEvent } from "../../src/audit/events";
import { API_ACTOR, type AuditRecord } from "../../src/audit/record";
import { ulidTime } from "../lib/decode-ulid";

let counter = 0;
function records(
  n: number,
  { tenant = "alpha", session = `ses_${++counter}`, at = Date.UTC(2026, 5, 1) } = {},
): AuditRecord[] {
  return Array.from({ length: n }, (_, i) =>
    auditEvent(
      { tenant, session_id: session },
      {
        action: i % 2 ? "session.message_added" : "session.created",
        actor: API_ACTOR,
        agent: i % 3 ? "support" : "billing",
        details: { i },
      },
      at + i,
    ),
  );
}

async function count(sessionId: string): Promise<number> {
  return (await env.DB.prepare("SELECT COUNT(*) AS n FROM audit_log WHERE session_id = ?1")
    .bind(sessionId)
    .first<{ n: number }>())!.n;
}

describe("D1 audit writer", () => {
  it("writes a 50-row batch and ignores rows it already has", async () => {
    const batch = records(50);
    await writeAuditBatch(env.DB, batch);
    await writeAuditBatch(env.DB, batch);
    await writeAuditBatch(env.DB, batch.slice(10, 20));
    expect(await count(batch[0]!.session_id!)).toBe(50);
    const stored = await env.DB.prepare("SELECT details FROM audit_log WHERE id = ?1")
      .bind(batch[7]!.id)
      .first<{ details: string }>();
    expect(JSON.parse(stored!.details)).toEqual({ i: 7 });
  });

  it("refuses more than one batch's worth of rows", async () => {
    await expect(writeAuditBatch(env.DB, records(51))).rejects.toThrow(RangeError);
  });

  it("writes nothing or everything: a failing batch leaves no partial rows", async () => {
    const batch = records(20);
    const bad = { ...batch[15]!, actor_type: "alien" } as unknown as AuditRecord;
    await expect(writeAuditBatch(env.DB, [...batch.slice(0, 15), bad, ...batch.slice(16)])).rejects.toThrow();
    expect(await count(batch[0]!.session_id!)).toBe(0);
  });
});

describe("D1 audit query", () => {
  it("pages a tenant's records newest first with a cursor, and filters", async () => {
    const session = `ses_q${++counter}`;
    const rows = records(7, { session, tenant: "gamma" });
    await writeAuditBatch(env.DB, rows);
    await writeAuditBatch(env.DB, records(3, { tenant: "delta" }));

    const first = await queryAudit(env.DB, "gamma", { limit: 3 });
    expect(first.records.map((r) => r.details.i)).toEqual([6, 5, 4]);
    const second = await queryAudit(env.DB, "gamma", { limit: 3, before: first.next! });
    const third = await queryAudit(env.DB, "gamma", { limit: 3, before: second.next! });
    expect([...second.records, ...third.records].map((r) => r.details.i)).toEqual([3, 2, 1, 0]);
    expect(third.next).toBeNull();

    expect(
      (await queryAudit(env.DB, "gamma", { limit: 50, action: "session.created" })).records.map((r) => r.details.i),
    ).toEqual([6, 4, 2, 0]);
    expect(
      (await queryAudit(env.DB, "gamma", { limit: 50, agent: "billing" })).records.map((r) => r.details.i),
    ).toEqual([6, 3, 0]);
    expect((await queryAudit(env.DB, "gamma", { limit: 50, session_id: "ses_other" })).records).toEqual([]);
    const since = await queryAudit(env.DB, "gamma", { limit: 50, since: Date.parse(rows[5]!.at) });
    expect(since.records.map((r) => r.details.i)).toEqual([6, 5]);
    expect((await queryAudit(env.DB, "gamma", { limit: 50 })).records.every((r) => r.tenant === "gamma")).toBe(true);
  });

  it("matches an agent as the actor too", async () => {
    const record = auditEvent(
      { tenant: "epsilon", session_id: "s" },
      { action: "session.message_added", actor: { actor: "writer", actor_type: "agent" } },
      Date.UTC(2026, 5, 2),
    );
    await writeAuditBatch(env.DB, [record]);
    expect((await queryAudit(env.DB, "epsilon", { limit: 5, agent: "writer" })).records).toEqual([record]);
  });

  it("does not match an agent's name when a person or Relay made the record", async () => {
    const byApi = auditEvent(
      { tenant: "zeta", session_id: "s" },
      { action: "session.message_added", actor: { actor: "writer", actor_type: "user" } },
      Date.UTC(2026, 5, 2),
    );
    const byAgentAboutItself = auditEvent(
      { tenant: "zeta", session_id: "s" },
      { action: "session.message_added", actor: { actor: "writer", actor_type: "agent" }, agent: "writer" },
      Date.UTC(2026, 5, 3),
    );
    await writeAuditBatch(env.DB, [byApi, byAgentAboutItself]);
    expect((await queryAudit(env.DB, "zeta", { limit: 5, agent: "writer" })).records).toEqual([byAgentAboutItself]);
  });

  // Every index is b-tree rows written with every record: each one must serve a filter, and
  // each documented filter (docs/api.md, GET /v1/audit) must be served by one, never a scan.
  it.each<[string, Omit<AuditQuery, "limit">, string[]]>([
    ["no filter", {}, ["PRIMARY KEY"]],
    ["session_id", { session_id: "s" }, ["audit_log_session"]],
    ["agent (about it or made by it)", { agent: "writer" }, ["audit_log_actor", "audit_log_agent"]],
    ["action", { action: "session.created" }, ["audit_log_action"]],
    ["since", { since: Date.UTC(2026, 5, 1) }, ["PRIMARY KEY"]],
    ["a cursor", { before: "01JX0000000000000000000000" }, ["PRIMARY KEY"]],
    ["session_id and action", { session_id: "s", action: "session.created" }, ["audit_log_session"]],
    ["agent and session_id", { agent: "writer", session_id: "s" }, ["audit_log_actor", "audit_log_agent"]],
  ])("reads %s through an index", async (_, filter, expected) => {
    const { sql, binds } = auditPageQuery("alpha", { limit: 10, ...filter });
    const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
      .bind(...binds)
      .all<{ detail: string }>();
    const details = plan.results.map((step) => step.detail);
    expect(details.filter((d) => /^SCAN audit_log\b/.test(d) && !/INDEX/.test(d))).toEqual([]);
    // The table's own (tenant, id) key, or a named index.
    const used = details.flatMap(
      (d) => /USING (?:(?:COVERING )?INDEX (\w+)|(PRIMARY KEY))/.exec(d)?.slice(1).find(Boolean) ?? [],
    );
    expect([...new Set(used)].sort()).toEqual(expected);
  });

  it("writes four b-tree rows a record: the row (its key is the tenant's order), and the session, action and agent entries", async () => {
    const [about] = records(1, { tenant: "eta" });
    expect(
      (
        await env.DB.prepare(
          "INSERT INTO audit_log (id, at, tenant, session_id, handoff_id, action, agent, actor, actor_type, details) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )
          .bind(
            about!.id,
            about!.at,
            about!.tenant,
            about!.session_id,
            null,
            about!.action,
            about!.agent,
            about!.actor,
            about!.actor_type,
            "{}",
          )
          .run()
      ).meta.rows_written,
    ).toBe(4);
    const indexes = await env.DB.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'audit_log' AND sql IS NOT NULL ORDER BY name",
    ).all<{ name: string }>();
    expect(indexes.results.map((i) => i.name)).toEqual([
      "audit_log_action",
      "audit_log_actor",
      "audit_log_agent",
      "audit_log_session",
    ]);
  });

  it("floors a time to the smallest ULID of its millisecond", () => {
    const ms = Date.UTC(2026, 0, 1);
    expect(ulidFloor(ms)).toMatch(/^[0-9A-Z]{10}0{16}$/);
    expect(ulidTime(ulidFloor(ms))).toBe(ms);
    expect(
      ulidFloor(ms) < auditEvent({ tenant: "t", session_id: null }, { action: "a.b", actor: API_ACTOR }, ms).id,
    ).toBe(true);
  });
});
