import { holdRouter, ROUTER_BUDGET_BYTES, touchRouter } from "../../src/routing/router-budget";
import { decodeShard } from "../../src/routing/router-codec";
import type { RouteAgent } from "../../src/routing/router-image";
import { type CompiledRuleRouter, routerFromShards, type WrappedShard, wrapShard } from "../../src/routing/rule-router";
import { sharedShards, shareShard } from "../../src/routing/shard-pool";
import type { RoutedByObject, RouteNeeds } from "../../src/rpc/router";
import type { ShardStore } from "./shard-store";

/**
 * The router object's own loaded router (docs/scaling.md, "The first route of a fresh
 * isolate"). Once the object has answered a route or kept a version, it loads the version kept
 * into memory as an isolate does — a shard a turn, in the background, never in a route's way —
 * and answers routes from it once it is whole: the same router an isolate loads, so the same
 * decisions, without reading and slicing 64 shards per route. Until then, and for a version
 * kept after the one it holds, routes are decided from the stored sections (cold-route.ts).
 */

/** What names a kept version: its number and stamp, and its shards' stamps. */
export interface VersionShape {
  version: number;
  stamp: string;
  shards: readonly { stamp: string }[];
}

/** One whole version, loaded. */
export interface WarmVersion {
  version: number;
  stamp: string;
  key: string;
  router: CompiledRuleRouter;
  stamps: string[];
  wrapped: WrappedShard[];
  agents: RouteAgent[];
  /** Every agent as one JSON array (what an answer that is not final carries). */
  every: Uint8Array;
  /** The enabled agents' name, title and description, as one JSON array (all the `prompt_user` fallback reads). */
  summaries: Uint8Array;
}

const keyOf = (v: VersionShape) => `${v.version}:${v.stamp}:${v.shards.map((s) => s.stamp).join(",")}`;
const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/**
 * How long after a route it answered from the sections the object starts loading: the route's
 * answer is then out and read (locally the Worker runs in the object's isolate, where each piece
 * of the load holds up whatever else is running). As an isolate waits before its own load.
 */
export const WARM_DELAY_MS = 100;
const encoder = new TextEncoder();

export class WarmRouter {
  private held: WarmVersion | null = null;
  private loadingKey: string | null = null;
  /** The version whose router is bigger than the isolate's whole router budget: never loaded again. */
  private oversized: string | null = null;

  /**
   * `kept`: the version the object keeps now (its shards' rows are that version's); `budget`:
   * the isolate's router budget (src/routing/router-budget.ts), which this router shares.
   */
  constructor(
    private readonly store: ShardStore,
    private readonly kept: () => VersionShape | null,
    private readonly budget = ROUTER_BUDGET_BYTES,
  ) {}

  /** The loaded router of `version`, when it is the one held. */
  of(version: VersionShape): WarmVersion | null {
    if (this.held === null || this.held.key !== keyOf(version)) return null;
    touchRouter(this);
    return this.held;
  }

  /** The memory of the router held (its tables, as /v1/route/stats counts an isolate's), and its version. */
  stats(): { version: number | null; memory_bytes: number } {
    return { version: this.held?.version ?? null, memory_bytes: this.held?.router.memoryBytes ?? 0 };
  }

  /**
   * Starts loading the version kept now, `afterMs` from now, unless it is held or loading
   * already. Never awaited.
   */
  warm(tenant: string, afterMs = 0): void {
    const target = this.kept();
    if (target === null) return;
    const key = keyOf(target);
    if (this.held?.key === key || this.loadingKey === key || this.oversized === key) return;
    this.loadingKey = key;
    new Promise((resolve) => setTimeout(resolve, afterMs))
      .then(() => this.load(tenant, target, key))
      .catch(() => undefined)
      .finally(() => {
        if (this.loadingKey === key) this.loadingKey = null;
      });
  }

  /**
   * The shards the router held shares with `target` are kept; the others are taken from a
   * router this isolate holds for the tenant (src/routing/shard-pool.ts) or read and wrapped,
   * one a turn. A version kept meanwhile ends the load (its rows are the newer version's).
   */
  private async load(tenant: string, target: VersionShape, key: string): Promise<void> {
    const held = this.held;
    const reuse = new Map((held?.stamps ?? []).map((stamp, k) => [stamp, held!.wrapped[k]!]));
    const wrapped: WrappedShard[] = [];
    for (const [k, { stamp }] of target.shards.entries()) {
      // The answer that started the load goes out first; other requests run between two shards.
      await tick();
      const now = this.kept();
      if (now === null || keyOf(now) !== key) return;
      let shard = reuse.get(stamp) ?? sharedShards(tenant).get(stamp);
      if (shard === undefined) {
        shard = wrapShard(decodeShard(this.store.shards([k]).get(k)!));
        shareShard(tenant, stamp, shard);
      }
      wrapped.push(shard);
    }
    // Past the budget, the least recently used routers of the isolate are let go, this one
    // included when its turn comes (routes are then decided from the sections until reloaded).
    const kept = holdRouter(
      this,
      wrapped,
      () => {
        this.held = null;
      },
      this.budget,
    );
    if (!kept) {
      this.held = null;
      this.oversized = key;
      return;
    }
    const router = routerFromShards(wrapped);
    const agents = wrapped.flatMap((w) => w.image.agents);
    this.held = {
      version: target.version,
      stamp: target.stamp,
      key,
      router,
      stamps: target.shards.map((s) => s.stamp),
      wrapped,
      agents,
      every: encoder.encode(JSON.stringify(agents)),
      summaries: encoder.encode(
        JSON.stringify(
          agents
            .filter((a) => a.enabled)
            .map(({ name, title, description, enabled }) => ({ name, title, description, enabled })),
        ),
      ),
    };
  }
}

const listed = (agents: readonly RouteAgent[]) => encoder.encode(JSON.stringify(agents));

/**
 * A route answered from a whole loaded version: its decision, and its agents — the chosen one
 * when the decision is final at the threshold, otherwise what the route reads of them
 * (`RouteNeeds.list`). The sliced path (router.ts) answers the same decision and lists every
 * agent, which holds what any list asks.
 */
export async function answerFrom(warm: WarmVersion, input: string, needs: RouteNeeds): Promise<RoutedByObject> {
  // The spread reads the explanation (built when first read) into a property of its own.
  const decision = needs.decide ? { ...(await warm.router.decideInTurns(input)) } : null;
  const chosen = decision?.agent != null && decision.confidence >= needs.threshold ? decision.agent : null;
  const found = chosen === null ? undefined : warm.agents.find((a) => a.name === chosen);
  if (found !== undefined) return { version: warm.version, stamp: warm.stamp, decision, agents: listed([found]) };
  const agents = needs.list === "none" ? listed([]) : needs.list === "summaries" ? warm.summaries : warm.every;
  return { version: warm.version, stamp: warm.stamp, decision, agents };
}
