import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ARCHIVE_PART_BYTES, archiveAuditLog } from "../../src/audit/archive";
import { ulidFloor } from "../../src/audit/d1-store";
import type { AuditRecord } from "../../src/audit/record";
import { archiveKey } from "../../src/audit/retention";
import worker from "../../src/index";
import { call } from "../api/helpers";
import { shardOf } from "../shards";

/**
 * Audit retention on local D1 and R2: records older than the retention age move to the
 * archive, one NDJSON object per tenant per day, and leave D1 only once their object is
 * read back whole; a run that fails between the two loses nothing and the next doubles
 * nothing. Storage is shared by the tests of this file: each test has tenants of its own.
 */

const DAY = 86_400_000;
const NOW = Date.parse("2026-06-01T12:00:00.000Z");
/** 30 days: every day before 2026-05-02 is old at NOW. */
const DAYS = 30;
const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

let serial = 0;
/** A record made at `ms` (its id a ULID of that time, as Relay's are). */
function record(tenant: string, ms: number, details: Record<string, unknown> = {}): AuditRecord {
  let suffix = (++serial).toString(32).toUpperCase().padStart(16, "0");
  suffix = [...suffix].map((c) => CROCKFORD[Number.parseInt(c, 32)]).join("");
  return {
    id: ulidFloor(ms).slice(0, 10) + suffix,
    at: new Date(ms).toISOString(),
    tenant,
    session_id: `ses_${tenant}`,
    handoff_id: null,
    action: "session.message_added",
    agent: "desk",
    actor: "api",
    actor_type: "user",
    details,
  };
}

/** Straight into audit_log, ten rows a statement. */
/** Writes `records` straight into `db` (the registry database by default: the archive takes any). */
async function seed(records: AuditRecord[], db: D1Database = env.DB): Promise<void> {
  const statements: D1PreparedStatement[] = [];
  for (let at = 0; at < records.length; at += 10) {
    const rows = records.slice(at, at + 10);
    statements.push(
      db
        .prepare(
          `INSERT INTO audit_log (id, at, tenant, session_id, handoff_id, action, agent, actor, actor_type, details) VALUES ${rows
            .map(() => "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
            .join(", ")}`,
        )
        .bind(
          ...rows.flatMap((r) => [
            r.id,
            r.at,
            r.tenant,
            r.session_id,
            r.handoff_id,
            r.action,
            r.agent,
            r.actor,
            r.actor_type,
            JSON.stringify(r.details),
          ]),
        ),
    );
  }
  for (let at = 0; at < statements.length; at += 50) await db.batch(statements.slice(at, at + 50));
}

/** `n` records of `tenant` spread over the day of `ms`. */
const day = (tenant: string, ms: number, n: number) =>
  Array.from({ length: n }, (_, i) => record(tenant, ms + i * 1000, { n: i }));

async function inD1(tenant: string): Promise<string[]> {
  const { results } = await env.DB.prepare("SELECT id FROM audit_log WHERE tenant = ? ORDER BY id")
    .bind(tenant)
    .all<{ id: string }>();
  return results.map((r) => r.id);
}

async function archived(tenant: string, dayName: string): Promise<AuditRecord[] | null> {
  const object = await env.AUDIT_ARCHIVE!.get(archiveKey(tenant, dayName));
  if (!object) return null;
  const text = await object.text();
  expect(text.endsWith("\n")).toBe(true);
  return text
    .slice(0, -1)
    .split("\n")
    .map((line) => JSON.parse(line) as AuditRecord);
}

const ids = (records: AuditRecord[] | null) => (records ?? []).map((r) => r.id);
const archive = (options: Partial<Parameters<typeof archiveAuditLog>[2]> = {}) =>
  archiveAuditLog(env.DB, env.AUDIT_ARCHIVE!, { now: NOW, days: DAYS, ...options });

describe("audit retention", () => {
  it("moves records older than the age to R2, one NDJSON object per tenant per day in id order, and deletes them from D1", async () => {
    const [a, b] = ["ret-move-a", "ret-move-b"];
    const aOld1 = day(a, Date.parse("2026-04-10T08:00:00Z"), 5);
    const aOld2 = day(a, Date.parse("2026-04-11T23:59:57Z"), 3);
    const bOld = day(b, Date.parse("2026-04-10T09:00:00Z"), 4);
    // The last moments of the last old day, and the first of the first kept one.
    const aEdge = [record(a, Date.parse("2026-05-01T23:59:59.999Z"))];
    const aKept = [record(a, Date.parse("2026-05-02T00:00:00.000Z")), record(a, NOW - DAY)];
    await seed([...aOld1, ...aOld2, ...bOld, ...aEdge, ...aKept].reverse());

    const report = await archive();
    expect(report.before).toBe("2026-05-02");
    expect(report.failed).toEqual([]);
    const mine = report.archived.filter((d) => d.tenant === a || d.tenant === b);
    expect(mine.map((d) => `${d.tenant} ${d.day} ${d.moved}`)).toEqual([
      `${a} 2026-04-10 5`,
      `${b} 2026-04-10 4`,
      `${a} 2026-04-11 3`,
      `${a} 2026-05-01 1`,
    ]);
    expect(ids(await archived(a, "2026-04-10"))).toEqual(ids(aOld1));
    expect(ids(await archived(a, "2026-04-11"))).toEqual(ids(aOld2));
    expect(await archived(b, "2026-04-10")).toEqual(bOld);
    expect(ids(await archived(a, "2026-05-01"))).toEqual(ids(aEdge));
    expect(await archived(a, "2026-05-02")).toBeNull();
    expect(await inD1(a)).toEqual(ids(aKept));
    expect(await inD1(b)).toEqual([]);
    // A second run finds nothing old and writes nothing.
    const again = await archive();
    expect(again.archived.filter((d) => d.tenant === a || d.tenant === b)).toEqual([]);
  });

  it("a failure between export and delete loses nothing, and the next run doubles nothing", async () => {
    const tenant = "ret-fail";
    const old = day(tenant, Date.parse("2026-03-03T10:00:00Z"), 6);
    await seed(old);
    // D1 refuses every delete from audit_log: the run writes and checks the object, then fails to delete.
    await env.DB.exec(
      "CREATE TRIGGER audit_log_frozen BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is frozen'); END",
    );
    let failed: Awaited<ReturnType<typeof archive>>;
    try {
      failed = await archive();
    } finally {
      await env.DB.exec("DROP TRIGGER audit_log_frozen");
    }
    expect(failed.failed).toContainEqual({ tenant, day: "2026-03-03", error: expect.stringMatching(/frozen/) });
    expect(ids(await archived(tenant, "2026-03-03"))).toEqual(ids(old));
    expect(await inD1(tenant)).toEqual(ids(old));

    const next = await archive();
    expect(next.failed).toEqual([]);
    expect(next.archived.find((d) => d.tenant === tenant)).toMatchObject({ day: "2026-03-03", records: 6, moved: 6 });
    expect(await archived(tenant, "2026-03-03")).toEqual(old);
    expect(await inD1(tenant)).toEqual([]);
  });

  it("records that reach D1 after their day was archived join the day's object, each record once", async () => {
    const tenant = "ret-late";
    const first = day(tenant, Date.parse("2026-02-02T10:00:00Z"), 3);
    await seed(first);
    await archive();
    // An outbox that waited out a D1 outage: records of the archived day, one of them a resend.
    const late = day(tenant, Date.parse("2026-02-02T06:00:00Z"), 2);
    await seed([...late, first[1]!]);
    const report = await archive();
    expect(report.archived.find((d) => d.tenant === tenant)).toMatchObject({ records: 5, moved: 3 });
    expect(ids(await archived(tenant, "2026-02-02"))).toEqual(ids([...late, ...first]));
    expect(await inD1(tenant)).toEqual([]);
  });

  it("an object an earlier run left part-written is completed, not doubled", async () => {
    const tenant = "ret-part";
    const records = day(tenant, Date.parse("2026-01-15T00:00:00Z"), 4);
    await seed(records);
    const half = `${records
      .slice(0, 2)
      .map((r) => JSON.stringify(r))
      .join("\n")}\n`;
    await env.AUDIT_ARCHIVE!.put(archiveKey(tenant, "2026-01-15"), half);
    await archive();
    expect(await archived(tenant, "2026-01-15")).toEqual(records);
    expect(await inD1(tenant)).toEqual([]);
  });

  it("a run stops at its budget between days, and the next goes on from the oldest left", async () => {
    const tenant = "ret-budget";
    const days = ["2025-12-01", "2025-12-02", "2025-12-03"].map((d) => day(tenant, Date.parse(`${d}T12:00:00Z`), 3));
    await seed(days.flat());
    const first = await archive({ budget: 4 });
    expect(first.more).toBe(true);
    expect(first.archived.filter((d) => d.tenant === tenant).map((d) => d.day)).toEqual(["2025-12-01"]);
    await archive({ budget: 4 });
    await archive({ budget: 4 });
    expect(await inD1(tenant)).toEqual([]);
    for (const [i, d] of ["2025-12-01", "2025-12-02", "2025-12-03"].entries())
      expect(ids(await archived(tenant, d))).toEqual(ids(days[i]!));
  });

  it("a day larger than a part is uploaded in parts and read back whole", async () => {
    const tenant = "ret-large";
    const padding = "x".repeat(1_000);
    const records = Array.from({ length: Math.ceil((ARCHIVE_PART_BYTES * 1.2) / 1_200) }, (_, i) =>
      record(tenant, Date.parse("2025-11-11T00:00:00Z") + i * 10, { n: i, padding }),
    );
    await seed(records);
    const report = await archive();
    expect(report.archived.find((d) => d.tenant === tenant)).toMatchObject({ records: records.length });
    const object = await env.AUDIT_ARCHIVE!.head(archiveKey(tenant, "2025-11-11"));
    expect(object!.size).toBeGreaterThan(ARCHIVE_PART_BYTES);
    expect(ids(await archived(tenant, "2025-11-11"))).toEqual(ids(records));
    expect(await inD1(tenant)).toEqual([]);
  });
});

describe("the retention cron and GET /v1/audit", () => {
  it("the scheduled handler archives what is older than AUDIT_RETENTION_DAYS, and the API says where it went", async () => {
    const days = Number(env.AUDIT_RETENTION_DAYS);
    expect(days).toBeGreaterThan(0);
    const before = await call("GET", "/v1/audit?limit=1");
    expect(before.json.archive).toBeNull();
    const now = Date.now();
    const old = day("alpha", now - (days + 3) * DAY, 2);
    const recent = [record("alpha", now - DAY)];
    // On alpha's shard: the cron goes over every shard, the API reads alpha's.
    await seed([...old, ...recent], await shardOf("alpha"));

    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime: now, cron: "17 * * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);

    const oldDay = old[0]!.at.slice(0, 10);
    expect(ids(await archived("alpha", oldDay))).toEqual(ids(old));
    const after = await call("GET", "/v1/audit?limit=200");
    expect(ids(after.json.items)).toContain(recent[0]!.id);
    expect(ids(after.json.items)).not.toContain(old[0]!.id);
    expect(after.json.archive).toEqual({
      bucket: "relay-audit-archive",
      prefix: "audit/alpha/",
      objects: "audit/alpha/{day}.ndjson",
      first_day: oldDay,
      through: oldDay,
      days: 1,
      records: 2,
    });
  });
});
