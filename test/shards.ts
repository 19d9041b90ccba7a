import { env } from "cloudflare:workers";
import { readDatabase, shardDatabases } from "../src/services/tenant-shards";

/** The shard a tenant's audit trail, lists and handoff index are on, as the Worker finds it. */
export const shardOf = (tenant: string): Promise<D1Database> => readDatabase(env, tenant);

/** Every shard the test Worker binds. */
export const allShards = (): D1Database[] => shardDatabases(env);
