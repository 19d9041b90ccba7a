import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { queryAudit, writeAuditBatch } from "../../src/audit/d1-store";
import { auditEvent } from "../../src/audit/events";
import { handoffTransitioned } from "../../src/audit/handoff-events";
import { API_ACTOR } from "../../src/audit/record";
import { fullId, readAt, readDetails, shortId, storedAt, storedDetails } from "../../src/audit/stored-record";
import { ulid } from "../../src/lib/ulid";

const SESSION = "ses_01m8jb63d0kx9r74aab0pn1caa7sxjmfh84gmepkagf0ym5km5v8";
const OTHER = "ses_01m8jb63d0kx9r74aab0pn1caa7sxjmfh84gmepkagf0ym5kzzzz";
const RUN = `run_01m8jb63dkeb5ezjx0gg3wnsze_${SESSION}`;
const HANDOFF = `hof_01m8jb63ey2w32cbs8v7djyqwf_${SESSION}`;
const INBOX = `inb_01m8jb63ftc7g8vhc5s2s16m8k_${SESSION}`;
const ESCALATION = "inb_01m8jb63ftc7g8vhc5s2s16m8k_col_01m8jb63ftc7g8vhc5s2s16m8k";

describe("a record's ids as D1 keeps them", () => {
  it("leaves the session's suffix out of its run, inbox and handoff ids, and puts it back on read", () => {
    const details = { run_id: RUN, inbox_id: INBOX, handoff_id: HANDOFF, turns: 2 };
    const stored = storedDetails(details, SESSION);
    expect(stored).not.toContain(SESSION);
    expect(JSON.parse(stored)).toEqual({
      run_id: "run_01m8jb63dkeb5ezjx0gg3wnsze",
      inbox_id: "inb_01m8jb63ftc7g8vhc5s2s16m8k",
      handoff_id: "hof_01m8jb63ey2w32cbs8v7djyqwf",
      turns: 2,
    });
    expect(readDetails(stored, SESSION)).toEqual(details);
    expect(fullId(shortId(HANDOFF, SESSION), SESSION)).toBe(HANDOFF);
  });

  it("keeps whole what does not end in the record's own session, and what has no session", () => {
    const foreign = { run_id: `run_01m8jb63dkeb5ezjx0gg3wnsze_${OTHER}`, inbox_id: ESCALATION };
    expect(JSON.parse(storedDetails(foreign, SESSION))).toEqual(foreign);
    expect(JSON.parse(storedDetails({ run_id: RUN }, null))).toEqual({ run_id: RUN });
    expect(shortId(HANDOFF, null)).toBe(HANDOFF);
    // Other keys, and strings that merely look alike, are not touched.
    expect(JSON.parse(storedDetails({ note: RUN, run_id: "run_x" }, SESSION))).toEqual({ note: RUN, run_id: "run_x" });
  });

  it("reads rows stored before with their full ids unchanged", () => {
    const old = JSON.stringify({ run_id: RUN, inbox_id: INBOX });
    expect(readDetails(old, SESSION)).toEqual({ run_id: RUN, inbox_id: INBOX });
    expect(fullId(HANDOFF, SESSION)).toBe(HANDOFF);
  });

  it("leaves out a handoff transition's creation time when its id says it, and derives it again", async () => {
    const created = Date.UTC(2026, 5, 1, 12, 0, 0, 123);
    const id = `hof_${ulid(created).toLowerCase()}_${SESSION}`;
    const subject = {
      id,
      source: "desk",
      target: "billing",
      mode: "transfer" as const,
      policy: "immediate" as const,
      created_at: new Date(created).toISOString(),
    };
    const scope = { tenant: "stored-ids", session_id: SESSION };
    const step = { action: "handoff.completed", from: "transferring" as const, to: "completed" as const };
    const record = handoffTransitioned(scope, API_ACTOR, created + 5, subject, step);
    const stored = storedDetails(record.details, SESSION, id);
    expect(JSON.parse(stored)).not.toHaveProperty("created_at");
    expect(readDetails(stored, SESSION, id)).toEqual(record.details);
    // A creation time the id does not say is kept as it is.
    const other = handoffTransitioned(
      scope,
      API_ACTOR,
      created + 5,
      { ...subject, created_at: "2026-06-01T00:00:00.000Z" },
      step,
    );
    expect(JSON.parse(storedDetails(other.details, SESSION, id)).created_at).toBe("2026-06-01T00:00:00.000Z");
    // A record about a handoff that is not a transition gets no creation time on read.
    expect(readDetails('{"agent":"desk"}', SESSION, id)).toEqual({ agent: "desk" });
    await writeAuditBatch(env.DB, [record]);
    const { records } = await queryAudit(env.DB, "stored-ids", {
      session_id: SESSION,
      action: "handoff.completed",
      limit: 10,
    });
    expect(records).toEqual([record]);
  });

  it("keeps a record's time only when its id does not say it; `since` still finds it by its own time", async () => {
    const at = Date.UTC(2026, 6, 1, 10, 0, 0, 500);
    const plain = auditEvent({ tenant: "stored-at", session_id: null }, { action: "x.plain", actor: API_ACTOR }, at);
    expect(storedAt(plain.id, plain.at)).toBeNull();
    expect(readAt(plain.id, null)).toBe(plain.at);
    // A writer whose clock stepped back: its id is a later time than the record's own.
    const stepped = { ...plain, id: ulid(at + 2_000), at: new Date(at + 1_000).toISOString(), action: "x.stepped" };
    expect(storedAt(stepped.id, stepped.at)).toBe(stepped.at);
    await writeAuditBatch(env.DB, [plain, stepped]);
    const rows = await env.DB.prepare("SELECT action, at FROM audit_log WHERE tenant = 'stored-at' ORDER BY id").all();
    expect(rows.results).toEqual([
      { action: "x.plain", at: null },
      { action: "x.stepped", at: stepped.at },
    ]);
    const since = async (ms: number) =>
      (await queryAudit(env.DB, "stored-at", { since: ms, limit: 10 })).records.map((r) => r.action);
    expect(await since(at)).toEqual(["x.stepped", "x.plain"]);
    expect(await since(at + 1_000)).toEqual(["x.stepped"]);
    // Its id says a later time, but its own time is what `since` compares.
    expect(await since(at + 1_500)).toEqual([]);
    expect((await queryAudit(env.DB, "stored-at", { limit: 10 })).records).toEqual([stepped, plain]);
  });

  it("is stored short in audit_log and read back whole through the query the API uses", async () => {
    const record = auditEvent(
      { tenant: "stored-ids", session_id: SESSION },
      { action: "run.completed", actor: API_ACTOR, agent: "desk", handoff_id: HANDOFF, details: { run_id: RUN } },
      Date.UTC(2026, 5, 1),
    );
    await writeAuditBatch(env.DB, [record]);
    const row = await env.DB.prepare("SELECT handoff_id, details FROM audit_log WHERE id = ?1")
      .bind(record.id)
      .first<{ handoff_id: string; details: string }>();
    expect(row).toEqual({
      handoff_id: "hof_01m8jb63ey2w32cbs8v7djyqwf",
      details: '{"run_id":"run_01m8jb63dkeb5ezjx0gg3wnsze"}',
    });
    const { records } = await queryAudit(env.DB, "stored-ids", {
      session_id: SESSION,
      action: "run.completed",
      limit: 10,
    });
    expect(records).toEqual([record]);
  });
});
