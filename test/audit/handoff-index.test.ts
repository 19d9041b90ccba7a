import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { writeAuditBatch } from "../../src/audit/d1-store";
import { auditEvent } from "../../src/audit/events";
import { type HandoffSubject, handoffTransitioned } from "../../src/audit/handoff-events";
import { AGENT_HANDOFFS_PAGE, handoffIndexStatements, queryAgentHandoffs } from "../../src/audit/handoff-index";
import { API_ACTOR, AuditRecord, SYSTEM_ACTOR } from "../../src/audit/record";
import type { HandoffStatus } from "../../src/schemas/handoff";

const scope = { tenant: "alpha", session_id: "ses_index" };
const T = Date.UTC(2026, 5, 1);
let counter = 0;

function subject(target: string | null = "billing"): HandoffSubject {
  return {
    id: `hof_${String(++counter).padStart(26, "0")}_ses_index`,
    source: "triage",
    target,
    mode: "transfer",
    policy: "immediate",
    created_at: new Date(T).toISOString(),
  };
}

function steps(s: HandoffSubject, path: HandoffStatus[]): AuditRecord[] {
  return path.map((to, i) =>
    handoffTransitioned(
      scope,
      i === 0 ? API_ACTOR : SYSTEM_ACTOR,
      T + i,
      s,
      { action: `handoff.${to}`, from: i === 0 ? null : path[i - 1]!, to },
      i === 0 ? { request_reason: "needs billing" } : {},
    ),
  );
}

async function row(id: string) {
  return env.DB.prepare("SELECT status, target_agent, reason, completed_at FROM handoffs WHERE id = ?1")
    .bind(id)
    .first();
}

describe("handoff audit records", () => {
  it("are valid audit records about the target, carrying what the index needs", () => {
    const [record] = steps(subject(), ["initiated"]);
    expect(AuditRecord.parse(record)).toEqual(record);
    expect(record).toMatchObject({
      action: "handoff.initiated",
      agent: "billing",
      details: { from: null, to: "initiated", source: "triage", reason: "needs billing", mode: "transfer" },
    });
  });
});

describe("the D1 handoffs index", () => {
  it("collapses a batch to one row per handoff at its latest status, keeping the request's reason", async () => {
    const s = subject();
    await writeAuditBatch(env.DB, steps(s, ["initiated", "validating", "transferring", "completed"]));
    expect(await row(s.id)).toEqual({
      status: "completed",
      target_agent: "billing",
      reason: "needs billing",
      completed_at: new Date(T + 3).toISOString(),
    });
  });

  it("never moves a row backwards when an older batch is written again", async () => {
    const s = subject();
    const records = steps(s, ["initiated", "validating", "pending", "cancelled"]);
    await writeAuditBatch(env.DB, records.slice(0, 2));
    await writeAuditBatch(env.DB, records.slice(2));
    await writeAuditBatch(env.DB, records.slice(0, 2));
    expect(await row(s.id)).toMatchObject({ status: "cancelled", reason: "needs billing" });
  });

  it("ignores records that are not handoff transitions, and writes nothing for them", () => {
    const other = auditEvent(scope, { action: "session.created", actor: API_ACTOR }, T);
    const bad = { ...steps(subject(), ["initiated"])[0]!, details: { to: "exploded" } };
    expect(handoffIndexStatements(env.DB, [other, bad])).toEqual([]);
  });

  it("pages an agent's handoffs newest first, as source or as target", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const s = { ...subject(i % 2 ? "pager" : null), source: i % 2 ? "desk" : "pager" };
      ids.push(s.id);
      await writeAuditBatch(env.DB, steps(s, ["initiated", "validating", "failed"]));
    }
    const first = await queryAgentHandoffs(env.DB, "alpha", "pager", { limit: 3 });
    const second = await queryAgentHandoffs(env.DB, "alpha", "pager", { limit: 3, before: first.next! });
    expect([...first.handoffs, ...second.handoffs].map((h) => h.id)).toEqual([...ids].reverse());
    expect(second.next).toBeNull();
    expect((await queryAgentHandoffs(env.DB, "beta", "pager", { limit: 3 })).handoffs).toEqual([]);
  });

  // Every handoff's upsert writes each of the table's indexes in every flush: an index no
  // query uses is D1 rows written (and billed) per handoff for nothing.
  it("keeps only the indexes its query uses: an insert writes the row, its key and two index entries", async () => {
    const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${AGENT_HANDOFFS_PAGE}`)
      .bind("alpha", "pager", "\uffff", 10)
      .all<{ detail: string }>();
    const used = plan.results.flatMap((step) => /USING (?:COVERING )?INDEX (\w+)/.exec(step.detail)?.[1] ?? []);
    const indexes = await env.DB.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'handoffs' AND sql IS NOT NULL",
    ).all<{ name: string }>();
    expect(used.sort()).toEqual(["handoffs_source_id", "handoffs_target_id"]);
    expect(indexes.results.map((i) => i.name).sort()).toEqual(used);

    const [insert] = handoffIndexStatements(env.DB, steps(subject(), ["initiated"]));
    expect((await insert!.run()).meta.rows_written).toBe(4);
  });
});
