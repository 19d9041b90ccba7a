import { homeShard, type MoveCursor, ShardAssignment, type ShardPhase } from "./shard-assignment";

/**
 * `tenant_shards` in the registry database (migration 0015): a tenant's assignment, made on
 * first use, and the move's steps. Every change is a compare-and-set on `version`, so two
 * drivers of one move (the operator's call, the cron) never both take a step.
 */

const COLUMNS = "tenant, shard, phase, other, cursor, not_before, version, updated_at";

/** The tenant's assignment, if it has one. */
export async function findAssignment(db: D1Database, tenant: string): Promise<ShardAssignment | null> {
  const row = await db.prepare(`SELECT ${COLUMNS} FROM tenant_shards WHERE tenant = ?1`).bind(tenant).first();
  return row ? ShardAssignment.parse(row) : null;
}

/** The tenant's assignment, made now (on its home shard among `shards`) if it had none. */
export async function ensureAssignment(
  db: D1Database,
  tenant: string,
  shards: number,
  now: number,
): Promise<ShardAssignment> {
  const row = await db
    .prepare(
      `INSERT INTO tenant_shards (tenant, shard, updated_at) VALUES (?1, ?2, ?3)
       ON CONFLICT (tenant) DO UPDATE SET tenant = tenant RETURNING ${COLUMNS}`,
    )
    .bind(tenant, homeShard(tenant, shards), new Date(now).toISOString())
    .first();
  return ShardAssignment.parse(row);
}

/** What a step changes. */
export interface AssignmentChange {
  shard: number;
  phase: ShardPhase;
  other: number | null;
  cursor: MoveCursor | null;
  not_before: number;
}

/** Applies `change` if the row is still at `from.version`; the new row, or null when another driver moved first. */
export async function stepAssignment(
  db: D1Database,
  from: ShardAssignment,
  change: AssignmentChange,
  now: number,
): Promise<ShardAssignment | null> {
  const row = await db
    .prepare(
      `UPDATE tenant_shards SET shard = ?3, phase = ?4, other = ?5, cursor = ?6, not_before = ?7,
         version = version + 1, updated_at = ?8
       WHERE tenant = ?1 AND version = ?2 RETURNING ${COLUMNS}`,
    )
    .bind(
      from.tenant,
      from.version,
      change.shard,
      change.phase,
      change.other,
      change.cursor === null ? null : JSON.stringify(change.cursor),
      change.not_before,
      new Date(now).toISOString(),
    )
    .first();
  return row ? ShardAssignment.parse(row) : null;
}

/** Tenants with a move under way (the cron drives them on). */
export async function unsettledTenants(db: D1Database, limit: number): Promise<string[]> {
  const { results } = await db
    .prepare("SELECT tenant FROM tenant_shards WHERE phase <> 'settled' ORDER BY tenant LIMIT ?1")
    .bind(limit)
    .all<{ tenant: string }>();
  return results.map((r) => r.tenant);
}

/** How many tenants each shard holds. */
export async function tenantsPerShard(db: D1Database): Promise<Map<number, number>> {
  const { results } = await db
    .prepare("SELECT shard, COUNT(*) AS n FROM tenant_shards GROUP BY shard")
    .all<{ shard: number; n: number }>();
  return new Map(results.map((r) => [r.shard, r.n]));
}
