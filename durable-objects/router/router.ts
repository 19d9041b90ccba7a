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
  imageBytes,
  linkShard,
  planBuild,
  type StoredDefinition,
  shardBudgets,
  shardParts,
  shardsToSend,
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

/** Keys of what a build keeps in the object's storage. */
const VERSION_KEY = "version";
const SHARD_PREFIX = "shard:";
const PART_PREFIX = "part:";
/** What one load sends at most (an RPC answer may take 32 MiB). */
const LOAD_BYTES = 16 * 1024 * 1024;
/** Keys per storage.put/delete call (the storage API's limit). */
const KEYS_PER_CALL = 128;

export class RouterDO extends DurableObject<Env> implements RouterRpc {
  private parts = new Map<string, CompiledPart>();
  private shards: BuiltShard[] = [];
  private built: Built | null = null;
  private restored = false;
  /** The parts are in storage, not yet read back (after a restart). */
  private partsKept = false;
  private shardsBefore: BuiltShard[] = [];
  private queue: Promise<unknown> = Promise.resolve();

  /** Runs calls one at a time: every write and build sees the one before it done. */
  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const run = async () => {
      if (!this.restored) await this.restore();
      return work();
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * After a restart: the version built last, its shards and the agents' parts, from storage,
   * so a new isolate (or this object) loads them instead of compiling. A version that was not
   * kept whole is simply built again.
   */
  private async restore(): Promise<void> {
    this.restored = true;
    const storage = this.ctx.storage;
    const version = await storage.get<RouterVersion & { head: RegistryHead; shards: number }>(VERSION_KEY);
    if (version === undefined) return;
    const images = await storage.list<BuiltShard>({ prefix: SHARD_PREFIX });
    const shards: BuiltShard[] = [];
    for (let k = 0; k < version.shards; k++) {
      const shard = images.get(`${SHARD_PREFIX}${k}`);
      if (shard === undefined || shard.stamp !== version.stamps[k]) return;
      shards.push(shard);
    }
    // The parts wait for the next build: routes need only the shards.
    this.partsKept = true;
    this.shards = shards;
    const { head, shards: _count, ...rest } = version;
    this.built = { head, version: { ...rest, images: shards.map((s) => s.image) } };
  }

  /** The parts kept in storage, read back when first needed after a restart. */
  private async readParts(): Promise<void> {
    if (!this.partsKept) return;
    const parts = await this.ctx.storage.list<CompiledPart>({ prefix: PART_PREFIX });
    this.parts = new Map([...parts].map(([key, part]) => [key.slice(PART_PREFIX.length), part]));
    this.partsKept = false;
  }

  /** Keeps a build in storage: the parts compiled and shards linked by it, then the version. */
  private async keep(built: Built, compiled: readonly string[], removed: readonly string[], linked: readonly number[]) {
    const storage = this.ctx.storage;
    try {
      await storage.delete(VERSION_KEY);
      for (let i = 0; i < compiled.length; i += KEYS_PER_CALL) {
        const batch: Record<string, CompiledPart> = {};
        for (const name of compiled.slice(i, i + KEYS_PER_CALL)) batch[`${PART_PREFIX}${name}`] = this.parts.get(name)!;
        await storage.put(batch);
      }
      for (let i = 0; i < removed.length; i += KEYS_PER_CALL)
        await storage.delete(removed.slice(i, i + KEYS_PER_CALL).map((name) => `${PART_PREFIX}${name}`));
      for (const k of linked) await storage.put(`${SHARD_PREFIX}${k}`, this.shards[k]);
      const { images: _images, ...version } = built.version;
      await storage.put(VERSION_KEY, { ...version, head: built.head, shards: this.shards.length });
    } catch (error) {
      // Too large to keep (a value is at most 2 MB): a restart builds this version again.
      console.warn(`router: version ${built.head.version} not kept in storage: ${String(error)}`);
    }
  }

  async load(tenant: string, held: readonly string[]): Promise<Result<RouterVersion>> {
    return this.inTurn(async () => {
      const built = await this.sync(tenant, await registryHead(this.env.DB, tenant));
      // An RPC answer is at most 32 MiB: a large registry's shards come over several calls.
      return ok({ ...built.version, images: shardsToSend(this.shards, new Set(held), LOAD_BYTES) });
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
      await this.readParts();
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
    await this.readParts();
    if (this.built !== null && after.version === before.version + 1 && this.built.head.stamp === before.stamp) {
      // The parts are in name order: the change goes in at its place.
      const rows: StoredDefinition[] = [];
      let placed = change.text === null;
      for (const [name, held] of this.parts) {
        if (!placed && change.name < name) {
          rows.push({ name: change.name, text: change.text! });
          placed = true;
        }
        if (name !== change.name) rows.push({ name, text: held.text });
      }
      if (!placed) rows.push({ name: change.name, text: change.text! });
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
    await this.readParts();
    this.shardsBefore = this.shards;
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
      shards.push({
        stamp: `${head.stamp}:${head.version}:${k}`,
        image,
        bytes: imageBytes(image),
        agents: members[k]!.length,
        link_ms,
      });
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
    const removed = [...this.parts.keys()].filter((name) => !plan.parts.has(name));
    this.parts = plan.parts;
    this.shards = shards;
    this.built = {
      head,
      version: {
        version: head.version,
        stamp: head.stamp,
        stamps: shards.map((s) => s.stamp),
        images: shards.map((s) => s.image),
        build: stats,
      },
    };
    const linked = shards.flatMap((shard, k) => (shard === this.shardsBefore[k] ? [] : [k]));
    await this.keep(this.built, plan.compiled, removed, linked);
    return this.built;
  }
}

/** A RelayError thrown inside a call (a D1 failure is not one) comes back as a Result. */
function failure(error: unknown): Result<never> {
  if (isRelayError(error)) return err(error.code, error.message, error.details);
  throw error;
}
