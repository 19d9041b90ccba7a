import { auditEvent } from "./events";
import {
  REJECTION_FLUSH_MS,
  type Rejection,
  type RejectionBatch,
  RejectionCounter,
  type RejectionSample,
  SAMPLE_WINDOW_MS,
} from "./rejection-counter";
import { storedAt } from "./stored-record";

/**
 * Refused webhook deliveries in D1 (migration 0011): the counts the isolates flush, at most one
 * `webhook.rejected` audit sample per source per minute, and the tenant's read of both.
 * Counting is ./rejection-counter.ts; this is where it meets D1 and the request's `waitUntil`.
 */

/** Refusals of sources nobody configured are filed under this tenant (no API key reads it; operators query D1). */
export const UNKNOWN_SOURCE_TENANT = "_webhooks";
/** …in one bucket, whatever name the sender used: invented names cannot multiply rows or samples. */
export const UNKNOWN_SOURCE = "_unknown";

const iso = (ms: number) => new Date(ms).toISOString();

function sampleStatements(db: D1Database, sample: RejectionSample): D1PreparedStatement[] {
  const record = auditEvent(
    { tenant: sample.tenant, session_id: null },
    {
      action: "webhook.rejected",
      actor: { actor: `webhook:${sample.attempted ?? sample.source}`, actor_type: "webhook" },
      details: {
        source: sample.attempted ?? sample.source,
        reason: sample.reason,
        webhook_id: sample.webhook_id,
        // This record stands for the source's refusals in its minute; the counts are at GET /v1/webhooks/stats.
        sample: true,
        minute: iso(sample.window * SAMPLE_WINDOW_MS),
      },
    },
    sample.at,
  );
  return [
    // Written only if no isolate has written this source's sample for this minute (or a later one).
    db
      .prepare(
        `INSERT INTO audit_log (id, at, tenant, session_id, handoff_id, action, agent, actor, actor_type, details)
         SELECT ?1, ?2, ?3, NULL, NULL, ?4, NULL, ?5, 'webhook', ?6
         WHERE NOT EXISTS (SELECT 1 FROM webhook_rejection_samples WHERE tenant = ?3 AND source = ?7 AND minute >= ?8)`,
      )
      .bind(
        record.id,
        storedAt(record.id, record.at),
        record.tenant,
        record.action,
        record.actor,
        JSON.stringify(record.details),
        sample.source,
        sample.window,
      ),
    db
      .prepare(
        `INSERT INTO webhook_rejection_samples (tenant, source, minute) VALUES (?1, ?2, ?3)
         ON CONFLICT (tenant, source) DO UPDATE SET minute = max(minute, excluded.minute)`,
      )
      .bind(sample.tenant, sample.source, sample.window),
  ];
}

/** One D1 batch (one transaction): each sample before its gate moves, then the counts added. */
export function rejectionStatements(db: D1Database, batch: RejectionBatch): D1PreparedStatement[] {
  return [
    ...batch.samples.flatMap((sample) => sampleStatements(db, sample)),
    ...batch.counts.map((c) =>
      db
        .prepare(
          `INSERT INTO webhook_rejections (tenant, source, reason, count, first_at, last_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
           ON CONFLICT (tenant, source, reason) DO UPDATE SET count = count + excluded.count,
             first_at = min(first_at, excluded.first_at), last_at = max(last_at, excluded.last_at)`,
        )
        .bind(c.tenant, c.source, c.reason, c.count, iso(c.first_at), iso(c.last_at)),
    ),
  ];
}

/**
 * The isolate's refusal log: `record` counts in memory and makes sure a flush is coming; a
 * flush starts at most once per REJECTION_FLUSH_MS and writes everything counted by then in
 * one batch. A failed write keeps its counts for the next flush (the next refusal brings it);
 * an isolate that ends first loses them — these are counters, not audit records.
 */
export class RejectionLog {
  private readonly counter = new RejectionCounter();
  private flushPending = false;
  private lastFlush = 0;

  constructor(private readonly intervalMs = REJECTION_FLUSH_MS) {}

  /** Counts `rejection`; `databaseOf` names the database each tenant's counts go to (its shard). */
  record(databaseOf: DatabaseOf, rejection: Rejection, waitUntil: (work: Promise<unknown>) => void): void {
    this.counter.add(rejection);
    if (this.flushPending) return;
    this.flushPending = true;
    waitUntil(this.flushSoon(databaseOf));
  }

  private async flushSoon(databaseOf: DatabaseOf): Promise<void> {
    const wait = this.lastFlush + this.intervalMs - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    // From here a new refusal schedules the next flush (an interval after this one starts).
    this.flushPending = false;
    this.lastFlush = Date.now();
    const batch = this.counter.take();
    if (!batch) return;
    // Each tenant's part in one batch on its own database; a part that fails waits alone.
    await Promise.all(
      byTenant(batch).map(async ([tenant, part]) => {
        try {
          const db = await databaseOf(tenant);
          await db.batch(rejectionStatements(db, part));
          this.counter.written(part);
        } catch (error) {
          this.counter.putBack(part);
          console.error(
            `webhook refusal counts of '${tenant}' could not be written; they wait for the next flush`,
            error,
          );
        }
      }),
    );
  }
}

/** The database a tenant's rejection counts are written to. */
export type DatabaseOf = (tenant: string) => Promise<D1Database>;

function byTenant(batch: RejectionBatch): [string, RejectionBatch][] {
  const parts = new Map<string, RejectionBatch>();
  const part = (tenant: string) => {
    const found = parts.get(tenant) ?? { counts: [], samples: [] };
    parts.set(tenant, found);
    return found;
  };
  for (const count of batch.counts) part(count.tenant).counts.push(count);
  for (const sample of batch.samples) part(sample.tenant).samples.push(sample);
  return [...parts];
}

export interface SourceRejections {
  source: string;
  rejected: number;
  by_reason: Record<string, number>;
  first_rejected_at: string;
  last_rejected_at: string;
  /** The start of the newest minute with a `webhook.rejected` sample in the audit log, if any. */
  last_sample_minute: string | null;
}

/** A tenant's refusal counts per source (as flushed so far), in source order. */
export async function rejectionStats(db: D1Database, tenant: string): Promise<SourceRejections[]> {
  const [counts, samples] = await db.batch<Record<string, unknown>>([
    db
      .prepare(
        "SELECT source, reason, count, first_at, last_at FROM webhook_rejections WHERE tenant = ?1 ORDER BY source, reason",
      )
      .bind(tenant),
    db.prepare("SELECT source, minute FROM webhook_rejection_samples WHERE tenant = ?1").bind(tenant),
  ]);
  const minutes = new Map(
    (samples!.results as { source: string; minute: number }[]).map((row) => [row.source, row.minute]),
  );
  const bySource = new Map<string, SourceRejections>();
  for (const row of counts!.results as {
    source: string;
    reason: string;
    count: number;
    first_at: string;
    last_at: string;
  }[]) {
    const minute = minutes.get(row.source);
    const entry = bySource.get(row.source) ?? {
      source: row.source,
      rejected: 0,
      by_reason: {},
      first_rejected_at: row.first_at,
      last_rejected_at: row.last_at,
      last_sample_minute: minute === undefined ? null : iso(minute * SAMPLE_WINDOW_MS),
    };
    entry.rejected += row.count;
    entry.by_reason[row.reason] = row.count;
    if (row.first_at < entry.first_rejected_at) entry.first_rejected_at = row.first_at;
    if (row.last_at > entry.last_rejected_at) entry.last_rejected_at = row.last_at;
    bySource.set(row.source, entry);
  }
  return [...bySource.values()];
}
