import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { writeAuditBatch } from "../../src/audit/d1-store";
import * as events from "../../src/audit/events";
import { handoffTransitioned } from "../../src/audit/handoff-events";
import { API_ACTOR, type AuditRecord, SYSTEM_ACTOR } from "../../src/audit/record";
import { querySessions, sessionIndexStatements } from "../../src/audit/session-index";

const T = Date.UTC(2026, 5, 1);
let counter = 0;

/**
 * A session's life as its object would audit it: created with `triage`, two messages, a
 * completed handoff to `billing`, one more message, then (optionally) an ending. Each flush
 * names the session's history length at that moment (`flushed`).
 */
function life(ending?: "expired" | "deleted", tenant = "alpha"): { id: string; records: AuditRecord[] } {
  const id = `ses_index_${String(++counter).padStart(4, "0")}`;
  const scope = { tenant, session_id: id };
  const message = (t: number, seq: number) =>
    events.messageAdded(scope, API_ACTOR, T + t, "triage", {
      message_id: `msg_${seq}`,
      seq,
      role: "user",
      author: null,
      chars: 2,
    });
  const subject = {
    id: `hof_${id}`,
    source: "triage",
    target: "billing",
    mode: "transfer" as const,
    policy: "immediate" as const,
    created_at: new Date(T + 3).toISOString(),
  };
  const records = [
    events.sessionCreated(scope, API_ACTOR, T, { agent: "triage", ttl_s: 60, metadata: {}, routed: false }),
    message(1, 1),
    message(2, 2),
    handoffTransitioned(scope, API_ACTOR, T + 3, subject, { action: "handoff.initiated", from: null, to: "initiated" }),
    handoffTransitioned(scope, SYSTEM_ACTOR, T + 4, subject, {
      action: "handoff.completed",
      from: "transferring",
      to: "completed",
    }),
    message(5, 3),
  ];
  if (ending === "expired")
    records.push(
      events.sessionExpired(scope, SYSTEM_ACTOR, T + 6, {
        agent: "billing",
        expires_at: new Date(T + 6).toISOString(),
        idle_s: 60,
      }),
    );
  if (ending === "deleted") records.push(events.sessionDeleted(scope, API_ACTOR, T + 6, { agent: "billing" }));
  return { id, records };
}

/** A batch as a session flushes it: its records, with its history's length then. */
const flushed = (id: string, records: AuditRecord[], historyLength: number) =>
  writeAuditBatch(env.DB, records, new Map([[id, historyLength]]));

/** The message records in a batch: what the sessions index counted before runs stopped writing them. */
const messagesIn = (records: AuditRecord[]) => records.filter((r) => r.action === "session.message_added").length;

async function row(id: string) {
  return env.DB.prepare(
    "SELECT status, initial_agent, current_agent, created_at, updated_at, ended_at, message_count, handoff_count FROM sessions WHERE id = ?1",
  )
    .bind(id)
    .first();
}

const at = (ms: number) => new Date(T + ms).toISOString();
const COMPLETE = {
  status: "active",
  initial_agent: "triage",
  current_agent: "billing",
  created_at: at(0),
  updated_at: at(5),
  ended_at: null,
  message_count: 3,
  handoff_count: 1,
};

describe("the D1 sessions index", () => {
  it("projects a session's records into one row", async () => {
    const { id, records } = life();
    await flushed(id, records, 3);
    expect(await row(id)).toEqual(COMPLETE);
  });

  it("counts each handoff once however batches are replayed or overlap; the message count only grows", async () => {
    const { id, records } = life();
    await flushed(id, records.slice(0, 3), 2);
    await flushed(id, records.slice(0, 3), 2);
    expect(await row(id)).toMatchObject({ message_count: 2, handoff_count: 0 });
    await flushed(id, records.slice(1, 5), 2);
    await flushed(id, records, 3);
    await flushed(id, records.slice(4), 3);
    // An older flush landing last says less than D1 already has.
    await flushed(id, records.slice(0, 3), 2);
    expect(await row(id)).toEqual(COMPLETE);
  });

  it("counts no messages from records alone: the session's flush says how long its history is", async () => {
    const { id, records } = life();
    await writeAuditBatch(env.DB, records);
    expect(await row(id)).toEqual({ ...COMPLETE, message_count: 0 });
  });

  it("reaches the same row when batches arrive out of order", async () => {
    const { id, records } = life("expired");
    await flushed(id, records.slice(4), 3);
    expect(await row(id)).toMatchObject({
      status: "expired",
      current_agent: "billing",
      message_count: 3,
      handoff_count: 1,
    });
    await flushed(id, records.slice(0, 4), 2);
    expect(await row(id)).toEqual({ ...COMPLETE, status: "expired", updated_at: at(6), ended_at: at(6) });
  });

  it("keeps an ending when an older batch comes again", async () => {
    const { id, records } = life("deleted");
    await flushed(id, records, 3);
    await flushed(id, records.slice(0, 3), 2);
    expect(await row(id)).toEqual({ ...COMPLETE, status: "deleted", updated_at: at(6), ended_at: at(6) });
  });

  it("writes no row when the batch fails", async () => {
    const { id, records } = life();
    const bad = { ...records[2]!, actor_type: "alien" } as unknown as AuditRecord;
    await expect(writeAuditBatch(env.DB, [records[0]!, records[1]!, bad])).rejects.toThrow();
    expect(await row(id)).toBeNull();
  });

  it("makes one statement per session and none for records without one", () => {
    const a = life();
    const b = life();
    const tenantWide = events.auditEvent(
      { tenant: "alpha", session_id: null },
      { action: "registry.updated", actor: API_ACTOR },
      T,
    );
    expect(sessionIndexStatements(env.DB, [...a.records, ...b.records, tenantWide])).toHaveLength(2);
    expect(sessionIndexStatements(env.DB, [tenantWide])).toEqual([]);
  });

  it("is backfilled by its migration exactly as the projection builds it", async () => {
    const lives = [life(undefined, "mu"), life("expired", "mu"), life("deleted", "mu")];
    // A session whose object had not flushed its first records yet: only later ones reached D1.
    const partial = life(undefined, "mu");
    // The backfill counts message records, as sessions did when each message had one.
    for (const s of [...lives, { ...partial, records: partial.records.slice(3) }])
      await flushed(s.id, s.records, messagesIn(s.records));
    const snapshot = async () =>
      (await env.DB.prepare("SELECT * FROM sessions WHERE tenant = 'mu' ORDER BY id").all()).results;
    const projected = await snapshot();
    expect(projected).toHaveLength(4);

    // 0004 ran when every row had its `at` (migration 0016 keeps it only when it is not the
    // id's time): it runs here on a copy of this tenant's rows with their times filled in.
    await env.DB.prepare("DROP TABLE IF EXISTS audit_log_0004").run();
    await env.DB.prepare("CREATE TABLE audit_log_0004 AS SELECT * FROM audit_log WHERE tenant = 'mu'").run();
    for (const s of [...lives, partial])
      for (const r of s.records)
        await env.DB.prepare("UPDATE audit_log_0004 SET at = ?1 WHERE id = ?2").bind(r.at, r.id).run();
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith("0004_"))!;
    const backfill = migration.queries.find((q) => q.includes("INSERT INTO sessions"))!;
    await env.DB.prepare("DELETE FROM sessions WHERE tenant = 'mu'").run();
    await env.DB.prepare(backfill.replaceAll("audit_log", "audit_log_0004")).run();
    await env.DB.prepare("DROP TABLE audit_log_0004").run();
    expect(await snapshot()).toEqual(projected);

    // Batches after the backfill add only what audit_log lacked.
    await flushed(lives[0]!.id, lives[0]!.records, 3);
    await flushed(partial.id, partial.records, 3);
    expect(await row(lives[0]!.id)).toEqual(COMPLETE);
    expect(await row(partial.id)).toEqual(COMPLETE);
  });

  it("pages a tenant's sessions newest first and filters by status and current agent", async () => {
    const mine = [life(undefined, "kappa"), life("expired", "kappa"), life(undefined, "kappa")];
    for (const s of mine) await flushed(s.id, s.records, 3);
    await writeAuditBatch(env.DB, life(undefined, "lambda").records);

    const first = await querySessions(env.DB, "kappa", { limit: 2 });
    const second = await querySessions(env.DB, "kappa", { limit: 2, before: first.next! });
    expect([...first.sessions, ...second.sessions].map((s) => s.id)).toEqual(mine.map((s) => s.id).reverse());
    expect(second.next).toBeNull();
    expect((await querySessions(env.DB, "kappa", { limit: 10, status: "expired" })).sessions.map((s) => s.id)).toEqual([
      mine[1]!.id,
    ]);
    expect(
      (await querySessions(env.DB, "kappa", { limit: 10, agent: "billing", status: "active" })).sessions.map(
        (s) => s.id,
      ),
    ).toEqual([mine[2]!.id, mine[0]!.id]);
    expect((await querySessions(env.DB, "kappa", { limit: 10, agent: "triage" })).sessions).toEqual([]);
  });
});
