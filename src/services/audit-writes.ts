import { writeAuditBatch } from "../audit/d1-store";
import type { AuditRecord } from "../audit/record";
import type { Env } from "../env";
import { writeDatabase } from "./tenant-shards";
import { meteredAuditDb } from "./usage-meter";

/**
 * An object's audit flush, to its tenant's shard, counted in the tenant's usage. Throws what
 * the write throws, and TenantMoving while the tenant's rows are copied to another shard: the
 * caller's outbox keeps the records and retries, as it does when D1 is down. A session's flush
 * names its history's length, which the sessions index shows as its message count.
 */
export async function flushAuditRecords(
  env: Env,
  records: readonly AuditRecord[],
  historyLengths?: ReadonlyMap<string, number>,
): Promise<void> {
  const tenant = records[0]?.tenant;
  if (tenant === undefined) return;
  if (records.some((r) => r.tenant !== tenant)) throw new Error("an audit flush holds one tenant's records");
  const db = await writeDatabase(env, tenant);
  await writeAuditBatch(meteredAuditDb(env, db, records), records, historyLengths);
}
