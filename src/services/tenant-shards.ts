import { ASSIGNMENT_TTL_MS, readShard, type ShardAssignment, writeShard } from "../audit/shard-assignment";
import { ensureAssignment } from "../audit/shard-store";
import type { Env } from "../env";

/**
 * Which D1 database holds a tenant's audit trail, lists and handoff index (docs/scaling.md,
 * Shards). The assignment is read from the registry at most once per ASSIGNMENT_TTL_MS per
 * tenant in an isolate; a move waits longer than that between its phases.
 */

type ShardEnv = Pick<Env, "DB"> & Partial<Record<`AUDIT_DB_${number}`, D1Database | undefined>>;

/** The shards bound, AUDIT_DB_0 on without a gap; none bound: DB alone. */
export function shardDatabases(env: ShardEnv): D1Database[] {
  const shards: D1Database[] = [];
  for (let i = 0; ; i++) {
    const db = env[`AUDIT_DB_${i}`];
    if (!db) break;
    shards.push(db);
  }
  return shards.length > 0 ? shards : [env.DB];
}

/** A shard by number; an assignment to a shard the deployment no longer binds is its mistake, said plainly. */
export function shardDatabase(env: ShardEnv, shard: number): D1Database {
  const db = shardDatabases(env)[shard];
  if (!db) throw new Error(`shard ${shard} is not bound: AUDIT_DB_${shard} is missing from wrangler.toml`);
  return db;
}

/** Written while a tenant's rows are copied to another shard: the write waits (an outbox retries). */
export class TenantMoving extends Error {
  constructor(tenant: string) {
    super(`tenant '${tenant}' is being moved to another shard; its writes wait until the copy is done`);
    this.name = "TenantMoving";
  }
}

interface Cached {
  assignment: ShardAssignment;
  until: number;
}

const cache = new Map<string, Cached>();
const loading = new Map<string, Promise<ShardAssignment>>();

/** The tenant's assignment: this isolate's copy while fresh, else the registry's (made on first use). */
export async function tenantAssignment(env: ShardEnv, tenant: string): Promise<ShardAssignment> {
  const held = cache.get(tenant);
  if (held && Date.now() < held.until) return held.assignment;
  let load = loading.get(tenant);
  if (!load) {
    load = ensureAssignment(env.DB, tenant, shardDatabases(env).length, Date.now())
      .then((assignment) => {
        heldAssignment(assignment);
        return assignment;
      })
      .finally(() => loading.delete(tenant));
    loading.set(tenant, load);
  }
  return load;
}

/** An assignment just read or written (a move's step): this isolate follows it at once. */
export function heldAssignment(assignment: ShardAssignment): void {
  if (cache.size > 10_000) cache.clear();
  cache.set(assignment.tenant, { assignment, until: Date.now() + ASSIGNMENT_TTL_MS });
}

/** The database a tenant's lists, audit and handoff history are read from. */
export async function readDatabase(env: ShardEnv, tenant: string): Promise<D1Database> {
  return shardDatabase(env, readShard(await tenantAssignment(env, tenant)));
}

/** The database a tenant's records are written to; throws TenantMoving while its rows are copied. */
export async function writeDatabase(env: ShardEnv, tenant: string): Promise<D1Database> {
  const shard = writeShard(await tenantAssignment(env, tenant));
  if (shard === null) throw new TenantMoving(tenant);
  return shardDatabase(env, shard);
}
