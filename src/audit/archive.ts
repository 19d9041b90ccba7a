import { ulidFloor } from "./d1-store";
import type { AuditRecord } from "./record";
import {
  archiveKey,
  dayOf,
  dayStart,
  firstKeptDay,
  idTime,
  mergeById,
  nextDay,
  retentionDays,
  toLine,
} from "./retention";
import { readRow, STORED_COLUMNS, type StoredRow } from "./stored-record";

/**
 * The audit archive: D1's records older than the retention age move to R2, one NDJSON
 * object per tenant per day, and only then leave D1 (docs/scaling.md). For each day:
 *
 * 1. the day's records are read from D1 in id order and written to the day's object —
 *    merged, id by id, with the object an earlier run left, if any, so a record is never
 *    in it twice;
 * 2. the object is read back and its lines counted: it must hold every record written;
 * 3. the day is entered in `audit_archives` (what `GET /v1/audit` reports);
 * 4. exactly the records written are deleted from D1, in one batch.
 *
 * A failure at any step leaves the records in D1 and the next run does the day again: the
 * merge keeps one line per id, so nothing is lost and nothing doubled. A record that
 * reaches D1 after its day was archived (an outbox that waited out a D1 outage) joins the
 * day's object on the next run.
 */

/** Parts of a multipart upload: R2 wants at least 5 MiB and all but the last of one size. */
export const ARCHIVE_PART_BYTES = 8 * 1024 * 1024;
/** Records a run moves at most; the next run (the cron is hourly) goes on. */
export const ARCHIVE_RUN_BUDGET = 200_000;
const PAGE = 500;
/** Ids per delete statement, bound as one JSON array (well under D1's 2 MB per value). */
const DELETE_IDS = 2_000;

export interface ArchiveOptions {
  now: number;
  /** The retention age in days (see retentionDays). */
  days: number;
  budget?: number;
  partBytes?: number;
}

export interface ArchivedDay {
  tenant: string;
  day: string;
  key: string;
  /** Lines in the object now (records archived before included). */
  records: number;
  /** Records taken from D1 by this run. */
  moved: number;
}

export interface ArchiveReport {
  /** Days before this one were archived (or tried). */
  before: string;
  archived: ArchivedDay[];
  failed: { tenant: string; day: string; error: string }[];
  /** True when the budget stopped the run with older days left. */
  more: boolean;
}

/**
 * Moves every tenant's records older than `days` whole days to `bucket`, day by day, oldest
 * first (within a day, tenants in name order). audit_log is keyed by (tenant, id), so each
 * tenant's oldest day is one seek; tenants are found by seeking past the last one.
 */
export async function archiveAuditLog(
  db: D1Database,
  bucket: R2Bucket,
  options: ArchiveOptions,
): Promise<ArchiveReport> {
  const before = firstKeptDay(options.now, options.days);
  const end = ulidFloor(dayStart(before));
  const budget = options.budget ?? ARCHIVE_RUN_BUDGET;
  const report: ArchiveReport = { before, archived: [], failed: [], more: false };
  // Each tenant's oldest day left to archive.
  const pending = new Map<string, string>();
  for (let tenant = await nextTenant(db, ""); tenant !== null; tenant = await nextTenant(db, tenant)) {
    const day = await oldestDay(db, tenant, "", end);
    if (day !== null) pending.set(tenant, day);
  }
  let moved = 0;
  while (pending.size > 0) {
    const day = [...pending.values()].sort()[0]!;
    const range = { from: ulidFloor(dayStart(day)), to: ulidFloor(dayStart(nextDay(day))) };
    const tenants = [...pending].filter(([, d]) => d === day).map(([tenant]) => tenant);
    for (const tenant of tenants.sort()) {
      const n = await countIn(db, tenant, range);
      if (moved > 0 && moved + n > budget) {
        report.more = true;
        return report;
      }
      try {
        const done = await archiveDay(db, bucket, tenant, day, range, options);
        report.archived.push(done);
        moved += done.moved;
      } catch (error) {
        report.failed.push({ tenant, day, error: error instanceof Error ? error.message : String(error) });
      }
      // The tenant's next day (a day that failed is passed over until the next run).
      const next = await oldestDay(db, tenant, range.to, end);
      if (next === null) pending.delete(tenant);
      else pending.set(tenant, next);
    }
  }
  return report;
}

/** The first tenant after `after` that has records, by name. */
async function nextTenant(db: D1Database, after: string): Promise<string | null> {
  const row = await db
    .prepare("SELECT tenant FROM audit_log WHERE tenant > ?1 ORDER BY tenant LIMIT 1")
    .bind(after)
    .first<{ tenant: string }>();
  return row?.tenant ?? null;
}

/** The day of the tenant's oldest record with an id in [from, end), or null. */
async function oldestDay(db: D1Database, tenant: string, from: string, end: string): Promise<string | null> {
  const row = await db
    .prepare("SELECT id FROM audit_log WHERE tenant = ?1 AND id >= ?2 AND id < ?3 ORDER BY id LIMIT 1")
    .bind(tenant, from, end)
    .first<{ id: string }>();
  return row ? dayOf(idTime(row.id)) : null;
}

async function countIn(db: D1Database, tenant: string, range: { from: string; to: string }): Promise<number> {
  const row = await db
    .prepare("SELECT COUNT(*) AS n FROM audit_log WHERE tenant = ?1 AND id >= ?2 AND id < ?3")
    .bind(tenant, range.from, range.to)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

async function archiveDay(
  db: D1Database,
  bucket: R2Bucket,
  tenant: string,
  day: string,
  range: { from: string; to: string },
  options: ArchiveOptions,
): Promise<ArchivedDay> {
  const key = archiveKey(tenant, day);
  const ids: string[] = [];
  const kept = (async function* () {
    for await (const record of dayRecords(db, tenant, range)) {
      ids.push(record.id);
      yield { id: record.id, line: toLine(record) };
    }
  })();
  const earlier = await bucket.get(key);
  const lines = earlier
    ? mergeById(linesOf(earlier.body), kept)
    : (async function* () {
        for await (const { line } of kept) yield line;
      })();
  const writer = new ObjectWriter(bucket, key, options.partBytes ?? ARCHIVE_PART_BYTES);
  try {
    for await (const line of lines) await writer.write(line);
    await writer.finish();
  } catch (error) {
    await writer.abort();
    throw error;
  }
  // Read back: the object must hold every line written, or nothing leaves D1.
  const stored = await bucket.get(key);
  const counted = stored ? await countLines(stored.body) : -1;
  if (counted !== writer.records || stored?.size !== writer.bytes)
    throw new Error(
      `${key}: ${writer.records} records (${writer.bytes} bytes) written, ${counted} read back (${stored?.size ?? 0} bytes); nothing deleted`,
    );
  await db
    .prepare(
      `INSERT INTO audit_archives (tenant, day, object_key, records, bytes, archived_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
       ON CONFLICT (tenant, day) DO UPDATE SET object_key = excluded.object_key, records = excluded.records,
         bytes = excluded.bytes, archived_at = excluded.archived_at`,
    )
    .bind(tenant, day, key, writer.records, writer.bytes, new Date(options.now).toISOString())
    .run();
  if (ids.length > 0) {
    const statements: D1PreparedStatement[] = [];
    for (let at = 0; at < ids.length; at += DELETE_IDS)
      statements.push(
        db
          .prepare("DELETE FROM audit_log WHERE tenant = ?1 AND id IN (SELECT value FROM json_each(?2))")
          .bind(tenant, JSON.stringify(ids.slice(at, at + DELETE_IDS))),
      );
    // One batch, one transaction: the day leaves D1 whole or not at all.
    await db.batch(statements);
  }
  return { tenant, day, key, records: writer.records, moved: ids.length };
}

/** A tenant's records of one day from D1, in id order, a page at a time. */
async function* dayRecords(
  db: D1Database,
  tenant: string,
  range: { from: string; to: string },
): AsyncGenerator<AuditRecord> {
  let after = "";
  for (;;) {
    const { results } = await db
      .prepare(
        `SELECT ${STORED_COLUMNS.join(", ")} FROM audit_log
         WHERE tenant = ?1 AND id >= ?2 AND id < ?3 AND id > ?4 ORDER BY id LIMIT ${PAGE}`,
      )
      .bind(tenant, range.from, range.to, after)
      .all<StoredRow>();
    for (const row of results) yield readRow(row);
    if (results.length < PAGE) return;
    after = results.at(-1)!.id;
  }
}

/** The lines of a stream of NDJSON, each with its newline. */
async function* linesOf(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let rest = "";
  for await (const text of body.pipeThrough(new TextDecoderStream())) {
    rest += text;
    let at = rest.indexOf("\n");
    while (at >= 0) {
      yield rest.slice(0, at + 1);
      rest = rest.slice(at + 1);
      at = rest.indexOf("\n");
    }
  }
  if (rest.length > 0) yield `${rest}\n`;
}

async function countLines(body: ReadableStream<Uint8Array>): Promise<number> {
  let lines = 0;
  for await (const chunk of body) for (const byte of chunk) if (byte === 0x0a) lines++;
  return lines;
}

const encoder = new TextEncoder();

/**
 * An object written line by line: one `put` when it stays under a part, else a multipart
 * upload of equal parts (R2's rule), so a day's object never has to fit in memory.
 */
class ObjectWriter {
  records = 0;
  bytes = 0;
  private chunks: Uint8Array[] = [];
  private buffered = 0;
  private upload: R2MultipartUpload | undefined;
  private readonly parts: R2UploadedPart[] = [];

  constructor(
    private readonly bucket: R2Bucket,
    private readonly key: string,
    private readonly partBytes: number,
  ) {}

  async write(line: string): Promise<void> {
    const bytes = encoder.encode(line);
    this.chunks.push(bytes);
    this.buffered += bytes.length;
    this.bytes += bytes.length;
    this.records++;
    while (this.buffered >= this.partBytes) await this.sendPart(this.take(this.partBytes));
  }

  async finish(): Promise<void> {
    if (!this.upload) {
      await this.bucket.put(this.key, this.take(this.buffered), { httpMetadata: HTTP_METADATA });
      return;
    }
    if (this.buffered > 0) await this.sendPart(this.take(this.buffered));
    await this.upload.complete(this.parts);
  }

  async abort(): Promise<void> {
    await this.upload?.abort().catch(() => undefined);
  }

  private async sendPart(part: Uint8Array): Promise<void> {
    this.upload ??= await this.bucket.createMultipartUpload(this.key, { httpMetadata: HTTP_METADATA });
    this.parts.push(await this.upload.uploadPart(this.parts.length + 1, part));
  }

  /** The first `n` buffered bytes, as one array. */
  private take(n: number): Uint8Array {
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const chunk = this.chunks[0]!;
      const used = Math.min(chunk.length, n - filled);
      out.set(chunk.subarray(0, used), filled);
      filled += used;
      if (used === chunk.length) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(used);
    }
    this.buffered -= n;
    return out;
  }
}

const HTTP_METADATA = { contentType: "application/x-ndjson" };

/** What `GET /v1/audit` says of a tenant's archive: null until a day of it is archived. */
export interface ArchiveSummary {
  /** The oldest and newest days archived (`YYYY-MM-DD`, UTC). */
  first_day: string;
  through: string;
  days: number;
  records: number;
}

export async function archiveSummary(db: D1Database, tenant: string): Promise<ArchiveSummary | null> {
  const row = await db
    .prepare(
      "SELECT MIN(day) AS first_day, MAX(day) AS through, COUNT(*) AS days, COALESCE(SUM(records), 0) AS records FROM audit_archives WHERE tenant = ?1",
    )
    .bind(tenant)
    .first<{ first_day: string | null; through: string | null; days: number; records: number }>();
  if (!row?.first_day || !row.through) return null;
  return { first_day: row.first_day, through: row.through, days: row.days, records: row.records };
}

/** The bindings a retention run needs. */
export interface RetentionEnv {
  AUDIT_ARCHIVE?: R2Bucket;
  AUDIT_RETENTION_DAYS?: string;
}

/**
 * The cron's retention run (src/index.ts `scheduled`), over each shard in turn: nothing without
 * a retention age; with one but no archive bucket, nothing either — records never leave D1
 * unarchived. A tenant being moved may be archived from both shards; the merge by id keeps
 * its day's object whole.
 */
export async function runRetention(
  env: RetentionEnv,
  shards: readonly D1Database[],
  now: number,
): Promise<ArchiveReport[] | null> {
  const days = retentionDays(env.AUDIT_RETENTION_DAYS);
  if (days === null) return null;
  if (!env.AUDIT_ARCHIVE) {
    console.error("AUDIT_RETENTION_DAYS is set but there is no AUDIT_ARCHIVE bucket: audit records stay in D1");
    return null;
  }
  const reports: ArchiveReport[] = [];
  for (const [shard, db] of shards.entries()) {
    const report = await archiveAuditLog(db, env.AUDIT_ARCHIVE, { now, days });
    const moved = report.archived.reduce((sum, day) => sum + day.moved, 0);
    console.log(
      JSON.stringify({
        event: "audit.retention",
        shard,
        before: report.before,
        days_archived: report.archived.length,
        records_moved: moved,
        failed: report.failed,
        more: report.more,
      }),
    );
    reports.push(report);
  }
  return reports;
}
