import type { Result } from "../errors";
import type { RuleDecision } from "../routing/types";
import type { AgentDefinition, StoredAgent } from "../schemas/agent";
import type { HistoryPageQuery, HistorySelection, RoutedInput, RoutedInputItem } from "../schemas/replay";

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
  /**
   * Wall time of compiling them, and nothing else (ms; the Workers clock reads whole ms and
   * moves only between events, so this is an upper bound: it may include other requests'
   * work that ran before the clock was read again).
   */
  compile_ms: number;
  /** Shards relinked, and the ms the link took in all. */
  linked_shards: number;
  link_ms: number;
  /** Wall time of the whole build (reading the registry included). */
  build_ms: number;
  /** The charge of the tenant's admitted patterns (in ASCII literal steps, pattern-cost.ts), and the budget. */
  pattern_instructions: number;
  pattern_budget: number;
}

/** A built router version as an isolate loads it. */
export interface RouterVersion {
  version: number;
  stamp: string;
  /**
   * One stamp per shard; `shards[k]` is shard k's sections packed in one buffer
   * (src/routing/router-codec.ts), or null where the caller already holds `stamps[k]` or the
   * answer had no room left for it (ask again, holding what came).
   */
  stamps: string[];
  shards: (Uint8Array | null)[];
  build: BuildStats;
}

/** What a route asks of the router object besides its input. */
export interface RouteNeeds {
  /** False when the rule tier is not asked (the LLM strategy): the answer has no decision. */
  decide: boolean;
  /** The decision is final at this confidence: the agents it lists are then the chosen one only. */
  threshold: number;
  /**
   * What the route reads of the agents when the decision is not final: every agent (the LLM
   * tier, a default agent; the default), the enabled ones' name, title and description only (the
   * `prompt_user` fallback lists them), or none (fallback `none`). The answer may list more.
   */
  list?: "every" | "summaries" | "none";
}

/** A route answered by the router object from the version it keeps. */
export interface RoutedByObject {
  /** The registry version that decided. */
  version: number;
  stamp: string;
  decision: RuleDecision | null;
  /**
   * Every agent, or, when the decision named an agent at or above the threshold, that agent
   * only (what the fallback and the LLM tier read): a JSON array of RouteAgent in UTF-8, in no
   * particular order — or less, as `RouteNeeds.list` allows (then only those agents and
   * fields). Text, because thousands of small objects cost far more to send over RPC.
   */
  agents: Uint8Array;
}

export interface RouterRpc {
  /**
   * Creates or replaces an agent, refusing one that would pass the pattern budget
   * (PATTERN_BUDGET_EXCEEDED) or, when it is new, the tenant's `maxAgents` (QUOTA_EXCEEDED;
   * null or left out: no limit).
   */
  putAgent(
    tenant: string,
    definition: AgentDefinition,
    maxAgents?: number | null,
  ): Promise<Result<{ created: boolean; agent: StoredAgent }>>;
  deleteAgent(tenant: string, name: string): Promise<Result<{ deleted: boolean }>>;
  /**
   * The router at the registry's current version (built first if needed), without the shards
   * whose stamps the caller holds.
   */
  load(tenant: string, held: readonly string[]): Promise<Result<RouterVersion>>;
  /**
   * The rule tier's decision for one input, from the version the object keeps (built first if
   * it keeps none), reading only the parts of it the input needs: how an isolate that holds no
   * version routes while it loads one.
   */
  route(tenant: string, input: string, needs: RouteNeeds): Promise<Result<RoutedByObject>>;
  /**
   * The router the object holds in memory to answer routes (its own load of the version it
   * keeps): that version, and its memory as /v1/route/stats counts an isolate's; null and 0
   * while it holds none.
   */
  memory(): Promise<Result<{ version: number | null; memory_bytes: number }>>;
  /**
   * Adds a routed session to the tenant's routing history (docs/routing.md, Replay), dropping
   * the oldest rows past HISTORY_ROWS in the same transaction; how many rows it holds then.
   */
  recordRoute(entry: RoutedInput): Promise<Result<{ held: number }>>;
  /** The newest recorded inputs the selection asks for, oldest first. Changes nothing. */
  routeHistory(selection: HistorySelection): Promise<Result<RoutedInput[]>>;
  /** A page of recorded inputs, newest first, by agent and kind; `next` is the seq to read before. */
  routeHistoryPage(query: HistoryPageQuery): Promise<Result<{ items: RoutedInputItem[]; next: number | null }>>;
  /** Deletes the tenant's routing history; how many rows went. */
  clearRouteHistory(): Promise<Result<{ deleted: number }>>;
}
