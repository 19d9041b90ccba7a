import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../src/env";
import { err, isRelayError, ok, type Result } from "../../src/errors";
import { patternBudgetError } from "../../src/registry/check-agent";
import {
  definitionText,
  deleteAgent,
  loadDefinitionTexts,
  putAgent,
  type RegistryHead,
  registryHead,
  storedDefinition,
} from "../../src/registry/store";
import {
  type BuiltShard,
  type CompiledPart,
  linkShard,
  planBuild,
  type StoredDefinition,
  shardBudgets,
  shardParts,
} from "../../src/routing/router-build";
import { compileAgentPart, patternSpend } from "../../src/routing/router-image";
import { PATTERN_BUDGET } from "../../src/routing/rules";
import type { BuildStats, RouterRpc, RouterVersion } from "../../src/rpc/router";
import type { AgentDefinition, StoredAgent } from "../../src/schemas/agent";

/**
 * One tenant's router (docs/scaling.md, "Where the router is built"). It is the one writer of
 * the tenant's agents, so admission against the pattern budget and the write are one step no
 * other write interleaves with; and it builds the compiled router version by version, off the
 * request path: a change recompiles the changed agent's part and relinks its shard only
 * (src/routing/router-build.ts). Isolates load the built version from here instead of
 * compiling, and keep the shards they already hold.
 *
 * Every call runs in turn (a queue): load the registry's state from D1 → plan and compile →
 * link the dirty shards (yielding between them, so a large build never holds the isolate long)
 * → keep the version in memory. After an eviction the next call rebuilds from D1.
 */

/** Lets other events in (and lets the Workers clock, which stands still while code runs, catch up). */
const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

interface Built {
  head: RegistryHead;
  version: RouterVersion;
}

export class RouterDO extends DurableObject<Env> implements RouterRpc {
  private parts = new Map<string, CompiledPart>();
  private shards: BuiltShard[] = [];
  private built: Built | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  /** Runs calls one at a time: every write and build sees the one before it done. */
  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  async load(tenant: string, held: readonly string[]): Promise<Result<RouterVersion>> {
    return this.inTurn(async () => {
      const built = await this.sync(tenant, await registryHead(this.env.DB, tenant));
      const have = new Set(held);
      return ok({
        ...built.version,
        images: built.version.images.map((image, k) => (have.has(built.version.stamps[k]!) ? null : image)),
      });
    });
  }

  async putAgent(
    tenant: string,
    definition: AgentDefinition,
  ): Promise<Result<{ created: boolean; agent: StoredAgent }>> {
    return this.inTurn(async () => {
      const before = await registryHead(this.env.DB, tenant);
      await this.sync(tenant, before);
      const part = compileAgentPart(definition);
      let others = 0;
      for (const [name, held] of this.parts) if (name !== definition.name) others += held.part.cost;
      const refused = patternBudgetError(definition.name, part.cost, others);
      if (refused) return err(refused.code, refused.message, refused.details);
      const written = await putAgent(this.env.DB, tenant, definition);
      await this.applied(tenant, before, { name: definition.name, text: definitionText(definition) });
      return ok(written);
    }).catch(failure);
  }

  async deleteAgent(tenant: string, name: string): Promise<Result<{ deleted: boolean }>> {
    return this.inTurn(async () => {
      const before = await registryHead(this.env.DB, tenant);
      await this.sync(tenant, before);
      const deleted = await deleteAgent(this.env.DB, tenant, name);
      await this.applied(tenant, before, { name, text: null });
      return ok({ deleted });
    }).catch(failure);
  }

  /**
   * After a write of ours: when the registry moved by exactly that write, the new state is the
   * parts held plus the change (no registry read); otherwise someone else wrote too, so read it.
   */
  private async applied(tenant: string, before: RegistryHead, change: { name: string; text: string | null }) {
    const after = await registryHead(this.env.DB, tenant);
    if (this.built !== null && after.version === before.version + 1 && this.built.head.stamp === before.stamp) {
      const rows: StoredDefinition[] = [];
      for (const [name, held] of this.parts) if (name !== change.name) rows.push({ name, text: held.text });
      if (change.text !== null) rows.push({ name: change.name, text: change.text });
      await this.build(after, rows);
      return;
    }
    await this.sync(tenant, after);
  }

  /** The built version at `head`, building it from the registry when it is not. */
  private async sync(tenant: string, head: RegistryHead): Promise<Built> {
    const built = this.built;
    if (built !== null && built.head.version === head.version && built.head.stamp === head.stamp) return built;
    return this.build(head, await loadDefinitionTexts(this.env.DB, tenant));
  }

  private async build(head: RegistryHead, rows: readonly StoredDefinition[]): Promise<Built> {
    const started = Date.now();
    const plan = planBuild(this.parts, this.shards.length, rows, storedDefinition, () => Date.now());
    // The clock moves only between events: one tick makes the compile time readable.
    await tick();
    const compiledAt = Date.now();
    const budgets = shardBudgets(plan.parts, plan.shards);
    const members = shardParts(plan.parts, plan.shards);
    const shards: BuiltShard[] = [];
    let linkMs = 0;
    for (let k = 0; k < plan.shards; k++) {
      const kept = this.shards[k];
      if (kept !== undefined && this.shards.length === plan.shards && !plan.dirty.includes(k)) {
        shards.push(kept);
        continue;
      }
      const linkStarted = Date.now();
      const image = linkShard(members[k]!, budgets[k]!, plan.shards);
      await tick();
      const link_ms = Date.now() - linkStarted;
      linkMs += link_ms;
      shards.push({ stamp: `${head.stamp}:${head.version}:${k}`, image, agents: members[k]!.length, link_ms });
    }
    const compiled = plan.compiled
      .map((agent) => ({ agent, ms: plan.parts.get(agent)!.compile_ms }))
      .sort((a, b) => b.ms - a.ms);
    const stats: BuildStats = {
      compiled: compiled.slice(0, 5),
      compiled_count: compiled.length,
      compile_ms: compiledAt - started,
      linked_shards: plan.dirty.length,
      link_ms: linkMs,
      build_ms: Date.now() - started,
      pattern_instructions: patternSpend([...plan.parts.values()].map((p) => p.part)),
      pattern_budget: PATTERN_BUDGET,
    };
    this.parts = plan.parts;
    this.shards = shards;
    this.built = {
      head,
      version: {
        version: head.version,
        stamp: head.stamp,
        agents: [...plan.parts.values()].map((p) => p.part.agent),
        stamps: shards.map((s) => s.stamp),
        images: shards.map((s) => s.image),
        build: stats,
      },
    };
    return this.built;
  }
}

/** A RelayError thrown inside a call (a D1 failure is not one) comes back as a Result. */
function failure(error: unknown): Result<never> {
  if (isRelayError(error)) return err(error.code, error.message, error.details);
  throw error;
}
