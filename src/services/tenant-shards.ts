import { ASSIGNMENT_TTL_MS, homeShard, readShard, type ShardAssignment, writeShard } from "../audit/shard-assignment";
import { ensureAssignment, findAssignment } from "../audit/shard-store";
import type { Env } from "../env";

/**
 * Which D1 database holds a tenant's audit trail, lists and handoff index (docs/scaling.md,
 * Shards). The assignment is read from the registry at most once per ASSIGNMENT_TTL_MS per
 * tenant in an isolate; a move waits longer than that between its phases.
 */

/** The bindings shard lookups need: the registry and the shards. */
export type ShardEnv = Pick<Env, "DB"> & Partial<Record<`AUDIT_DB_${number}`, D1Database | undefined>>;

/**
 * The shards bound, AUDIT_DB_0 on without a gap; none bound: DB alone. Only this counter
 * names a binding: a shard number from a request or a row indexes this list, never `env`.
 */
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
  /** null: the registry holds no row for the tenant yet (it has written nothing). */
  assignment: ShardAssignment | null;
  until: number;
}

const cache = new Map<string, Cached>();
const loading = new Map<string, Promise<ShardAssignment | null>>();

/** The tenant's stored assignment, or null: this isolate's copy while fresh, else the registry's. Never writes. */
async function storedAssignment(env: ShardEnv, tenant: string): Promise<ShardAssignment | null> {
  const held = cache.get(tenant);
  if (held && Date.now() < held.until) return held.assignment;
  let load = loading.get(tenant);
  if (!load) {
    load = findAssignment(env.DB, tenant)
      .then((assignment) => {
        hold(tenant, assignment);
        return assignment;
      })
      .finally(() => loading.delete(tenant));
    loading.set(tenant, load);
  }
  return load;
}

/** The tenant's assignment, stored now (on its home shard) if it had none: for writes, off the request path. */
export async function tenantAssignment(env: ShardEnv, tenant: string): Promise<ShardAssignment> {
  const stored = await storedAssignment(env, tenant);
  if (stored) return stored;
  const made = await ensureAssignment(env.DB, tenant, shardDatabases(env).length, Date.now());
  heldAssignment(made);
  return made;
}

function hold(tenant: string, assignment: ShardAssignment | null): void {
  if (cache.size > 10_000) cache.clear();
  cache.set(tenant, { assignment, until: Date.now() + ASSIGNMENT_TTL_MS });
}

/** An assignment just read or written (a move's step): this isolate follows it at once. */
export function heldAssignment(assignment: ShardAssignment): void {
  hold(assignment.tenant, assignment);
}

/**
 * The database a tenant's lists, audit and handoff history are read from. A tenant with no
 * stored shard has written nothing: its home shard is read, and nothing is written for it.
 */
export async function readDatabase(env: ShardEnv, tenant: string): Promise<D1Database> {
  const stored = await storedAssignment(env, tenant);
  return shardDatabase(env, stored ? readShard(stored) : homeShard(tenant, shardDatabases(env).length));
}

/** The database a tenant's records are written to; throws TenantMoving while its rows are copied. */
export async function writeDatabase(env: ShardEnv, tenant: string): Promise<D1Database> {
  const shard = writeShard(await tenantAssignment(env, tenant));
  if (shard === null) throw new TenantMoving(tenant);
  return shardDatabase(env, shard);
}
