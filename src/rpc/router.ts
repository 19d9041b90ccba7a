import type { Result } from "../errors";
import type { RouterImage } from "../routing/router-image";
import type { AgentDefinition, StoredAgent } from "../schemas/agent";

/**
 * The RouterDO's RPC contract (durable-objects/router/router.ts implements it): the tenant's
 * agent writes (admitted against the tenant's pattern budget, one at a time) and its compiled
 * router, built version by version off the request path. Types only.
 */

/** What a build did: the figures /v1/route/stats reports. */
export interface BuildStats {
  /** Agents whose part this build compiled, and the ms each took (the slowest first, at most 5). */
  compiled: { agent: string; ms: number }[];
  compiled_count: number;
  /** Wall time of compiling them (ms; the Workers clock reads whole ms). */
  compile_ms: number;
  /** Shards relinked, and the ms the link took in all. */
  linked_shards: number;
  link_ms: number;
  /** Wall time of the whole build (reading the registry included). */
  build_ms: number;
  /** The tenant's admitted pattern instructions, and the budget. */
  pattern_instructions: number;
  pattern_budget: number;
}

/** A built router version as an isolate loads it. */
export interface RouterVersion {
  version: number;
  stamp: string;
  /**
   * One stamp per shard; `images[k]` is null where the caller already holds `stamps[k]`, or
   * where the answer had no room left for it (ask again, holding what came).
   */
  stamps: string[];
  images: (RouterImage | null)[];
  build: BuildStats;
}

export interface RouterRpc {
  /** Creates or replaces an agent, refusing one that would pass the pattern budget (PATTERN_BUDGET_EXCEEDED). */
  putAgent(tenant: string, definition: AgentDefinition): Promise<Result<{ created: boolean; agent: StoredAgent }>>;
  deleteAgent(tenant: string, name: string): Promise<Result<{ deleted: boolean }>>;
  /**
   * The router at the registry's current version (built first if needed), without the shards
   * whose stamps the caller holds.
   */
  load(tenant: string, held: readonly string[]): Promise<Result<RouterVersion>>;
}
