import { DurableObject } from "cloudflare:workers";
import { agentWriteIntent } from "../../src/audit/agent-events";
import type { Env } from "../../src/env";
import { err, isRelayError, ok, type Result } from "../../src/errors";
import { countRefusal, quotaExceeded } from "../../src/quotas/admission";
import { patternBudgetError } from "../../src/registry/check-agent";
import {
  agentCount,
  definitionText,
  deleteAgent,
  loadDefinitionTexts,
  putAgent,
  type RegistryHead,
  registryHead,
  storedDefinition,
} from "../../src/registry/store";
import { decideFromSections, type PreparedShard, prepareShard } from "../../src/routing/cold-route";
import { routerBudget } from "../../src/routing/router-budget";
import {
  type BuiltShard,
  type CompiledPart,
  changedDefinitions,
  compileDefinitions,
  linkShard,
  planBuild,
  type StoredDefinition,
  shardBudgets,
  shardParts,
  shardsToSend,
} from "../../src/routing/router-build";
import { encodeShard, packSections, readAgents, readHead, type ShardSections } from "../../src/routing/router-codec";
import { PATTERN_BUDGET } from "../../src/routing/rules";
import { agentCharge } from "../../src/routing/rules/compile-rules";
import type { BuildStats, RoutedByObject, RouteNeeds, RouterRpc, RouterVersion } from "../../src/rpc/router";
import type { AgentDefinition, StoredAgent } from "../../src/schemas/agent";
import {
  HISTORY_ROWS,
  type HistoryPageQuery,
  type HistorySelection,
  type RoutedInput,
  type RoutedInputItem,
} from "../../src/schemas/replay";
import type { SchemaGate } from "../shared/sql";
import { AgentAudit } from "./agent-audit";
import { encoder, joinArrays, sum } from "./agent-lists";
import { RouteHistory } from "./route-history";
import { routerTables } from "./schema";
import { ShardStore } from "./shard-store";
import { timedCompile } from "./timed-compile";
import { answerFrom, WARM_DELAY_MS, WarmRouter } from "./warm-router";

/**
 * One tenant's router (docs/scaling.md, "Where the router is built"). It is the one writer of
 * the tenant's agents, so admission against the pattern budget and the write are one step no
 * other write interleaves with; and it builds the compiled router version by version, off the
 * request path: a change recompiles the changed agent's part and relinks its shard only
 * (src/routing/router-build.ts). Each linked shard is kept in storage in sections
 * (src/routing/router-codec.ts, shard-store.ts); isolates load the version from here instead of
 * compiling, keeping the shards they already hold, and an isolate that holds none routes here
 * meanwhile: the object answers from the sections the input needs.
 *
 * Writes, builds and loads run in turn (a queue): load the registry's state from D1 → plan and
 * compile → link the dirty shards (yielding between them, so a large build never holds the
 * isolate long) → keep them in one storage transaction. Routes do not queue: they read the
 * version kept, which a build replaces in one synchronous step — from the object's own loaded
 * router once it holds that version (warm-router.ts), from the stored sections until then.
 */

/** Lets other events in (and lets the Workers clock, which stands still while code runs, catch up). */
const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** The kept version's description (its shards' sections are rows of their own). */
interface KeptVersion {
  head: RegistryHead;
  version: number;
  stamp: string;
  build: BuildStats;
  shards: BuiltShard[];
}

const PART_PREFIX = "part:";
/** The storage keys of the format before sections (a version and its shards as objects). */
const LEGACY_VERSION_KEY = "version";
const LEGACY_SHARD_PREFIX = "shard:";
/**
 * What one load answer sends at most. An RPC answer may take 32 MiB, but reading, sending and
 * decoding it are each one piece of work other requests wait behind: a large registry comes in
 * answers of a few MiB.
 */
const LOAD_BYTES = 4 * 1024 * 1024;
/** Keys per storage.put/delete call (the storage API's limit). */
const KEYS_PER_CALL = 128;
/** Tries of a route whose version was replaced while it waited for its turn. */
const ROUTE_TRIES = 3;

export class RouterDO extends DurableObject<Env> implements RouterRpc {
  private readonly store: ShardStore;
  private parts = new Map<string, CompiledPart>();
  private built: KeptVersion | null = null;
  private restored = false;
  /** The parts are in storage, not yet read back (after a restart). */
  private partsKept = false;
  /** Heads read and wrapped for routes, by shard stamp. */
  private prepared = new Map<string, PreparedShard>();
  /** Moves whenever a version is kept: a route that waited can tell its version was replaced. */
  private generation = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly warm: WarmRouter;
  private readonly history: RouteHistory;
  private readonly schema: SchemaGate;
  private readonly audit: AgentAudit;
  /** The time of this instance's last registry write: the next one's is later (agent-audit.ts tells writes apart by it). */
  private lastWriteAt = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const { sql, schema } = routerTables(ctx.storage);
    this.schema = schema;
    this.store = new ShardStore(ctx.storage, sql, schema);
    this.warm = new WarmRouter(this.store, () => this.built, routerBudget(env));
    this.history = new RouteHistory(ctx.storage, sql, schema);
    this.audit = new AgentAudit(ctx.storage, sql, schema, env, () => this.now());
  }

  /** The object's clock. */
  protected now(): number {
    return Date.now();
  }

  /** Timers: the audit outbox's flush, and the check of a registry write a crash left unsettled. */
  override async alarm(): Promise<void> {
    try {
      if (!this.schema.ready()) return;
      await this.audit.timers.run(this.audit.handlers((work) => this.inTurn(work)));
    } catch (error) {
      // Never throw from an alarm: the platform drops it after six retries.
      console.error("RouterDO alarm failed; re-arming", error);
      this.audit.timers.forget();
      await this.ctx.storage.setAlarm(this.now() + 30_000).catch(() => undefined);
    }
  }

  /** Runs calls one at a time: every write and build sees the one before it done. */
  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const run = async () => {
      await this.restore();
      return work();
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * After a restart: the description of the version kept last (one row). Its shards stay in
   * storage until a route or a load reads them, and the parts until the next build.
   */
  private async restore(): Promise<void> {
    if (this.restored) return;
    this.restored = true;
    this.built = this.store.version<KeptVersion>();
    this.partsKept = true;
    if (this.built === null) await this.dropLegacy();
  }

  /** Storage of the format before sections goes: its version is built again from the parts. */
  private async dropLegacy(): Promise<void> {
    const legacy = await this.ctx.storage.get<{ shards?: number }>(LEGACY_VERSION_KEY);
    if (legacy === undefined) return;
    const keys = Array.from({ length: legacy.shards ?? 0 }, (_, k) => `${LEGACY_SHARD_PREFIX}${k}`);
    for (let i = 0; i < keys.length; i += KEYS_PER_CALL)
      await this.ctx.storage.delete(keys.slice(i, i + KEYS_PER_CALL));
    await this.ctx.storage.delete(LEGACY_VERSION_KEY);
  }

  /** The parts kept in storage, read back when first needed after a restart. */
  private async readParts(): Promise<void> {
    if (!this.partsKept) return;
    const parts = await this.ctx.storage.list<CompiledPart>({ prefix: PART_PREFIX });
    this.parts = new Map([...parts].map(([key, part]) => [key.slice(PART_PREFIX.length), part]));
    this.partsKept = false;
  }

  async load(tenant: string, held: readonly string[]): Promise<Result<RouterVersion>> {
    return this.inTurn(async () => {
      const built = await this.sync(tenant, await registryHead(this.env.DB, tenant));
      // An RPC answer is at most 32 MiB: a large registry's shards come over several calls.
      const send = shardsToSend(built.shards, new Set(held), LOAD_BYTES);
      const sections = this.store.shards(send);
      const shards = built.shards.map((_, k) => {
        const s = sections.get(k);
        return s === undefined ? null : packSections(s);
      });
      const { version, stamp, build } = built;
      return ok({ version, stamp, stamps: built.shards.map((s) => s.stamp), shards, build });
    });
  }

  async route(tenant: string, input: string, needs: RouteNeeds): Promise<Result<RoutedByObject>> {
    await this.restore();
    // Nothing kept yet: the version is built first (the one case a route waits for a build).
    if (this.built === null) await this.inTurn(() => this.sync(tenant, null));
    const warm = this.warm.of(this.built!);
    if (warm !== null) {
      // The heads read for the sliced path are not needed while the loaded router answers.
      this.prepared.clear();
      return ok(await answerFrom(warm, input, needs));
    }
    for (let attempt = 1; ; attempt++) {
      const built = this.built!;
      const generation = this.generation;
      const decision = needs.decide
        ? await decideFromSections(input, this.preparedShards(built), this.store, () => this.generation === generation)
        : null;
      if (needs.decide && decision === null && attempt < ROUTE_TRIES) continue;
      const final = decision?.agent != null && decision.confidence >= needs.threshold;
      const agents = this.agentsOf(built, final ? decision.agent : null);
      // The agents must be the deciding version's too (a route that waited may see a newer one).
      if (this.generation !== generation && attempt < ROUTE_TRIES) continue;
      // The next routes come from the object's own router, once it has loaded it in the background.
      this.warm.warm(tenant, WARM_DELAY_MS);
      return ok({ version: built.version, stamp: built.stamp, decision, agents });
    }
  }

  async memory(): Promise<Result<{ version: number | null; memory_bytes: number }>> {
    return ok(this.warm.stats());
  }

  // The routing history: storage only, so none of it waits for a write or a build in turn.
  async recordRoute(entry: RoutedInput): Promise<Result<{ held: number }>> {
    return ok({ held: this.history.record(entry, HISTORY_ROWS) });
  }

  async routeHistory(selection: HistorySelection): Promise<Result<RoutedInput[]>> {
    return ok(this.history.select(selection));
  }

  async routeHistoryPage(query: HistoryPageQuery): Promise<Result<{ items: RoutedInputItem[]; next: number | null }>> {
    return ok(this.history.page(query));
  }

  async clearRouteHistory(): Promise<Result<{ deleted: number }>> {
    return ok({ deleted: this.history.clear() });
  }

  /** The kept version's shards, prepared for routes (heads read once per shard version). */
  private preparedShards(built: KeptVersion): PreparedShard[] {
    const missing = built.shards.flatMap((s, k) => (this.prepared.has(s.stamp) ? [] : [k]));
    for (const [k, bytes] of this.store.heads(missing))
      this.prepared.set(built.shards[k]!.stamp, prepareShard(readHead(bytes)));
    const live = new Set(built.shards.map((s) => s.stamp));
    for (const stamp of this.prepared.keys()) if (!live.has(stamp)) this.prepared.delete(stamp);
    return built.shards.map((s) => this.prepared.get(s.stamp)!);
  }

  /** Every agent of the kept version, or only `chosen`, as one JSON array (the shards' lists joined as text). */
  private agentsOf(built: KeptVersion, chosen: string | null): Uint8Array {
    if (chosen !== null) {
      for (let k = 0; k < built.shards.length; k++) {
        const found = readAgents(this.store.agents(k)).find((a) => a.name === chosen);
        if (found !== undefined) return encoder.encode(JSON.stringify([found]));
      }
    }
    return joinArrays(built.shards.map((_, k) => this.store.agents(k)));
  }

  async putAgent(
    tenant: string,
    definition: AgentDefinition,
    maxAgents: number | null = null,
  ): Promise<Result<{ created: boolean; agent: StoredAgent }>> {
    return this.inTurn(async () => {
      await this.audit.recover();
      const before = await registryHead(this.env.DB, tenant);
      await this.sync(tenant, before);
      const { part, ms } = await timedCompile(definition);
      const compiled: CompiledPart = { text: definitionText(definition), part, compile_ms: ms };
      await this.readParts();
      let others = 0;
      for (const [name, held] of this.parts) if (name !== definition.name) others += agentCharge(held.part);
      const refused = patternBudgetError(definition.name, part, others);
      if (refused) return err(refused.code, refused.message, refused.details);
      // The parts are the registry at `before`, and only this object writes agents: the text held is the one replaced.
      const intent = agentWriteIntent(
        tenant,
        definition.name,
        this.writeTime(),
        this.parts.get(definition.name)?.text ?? null,
        compiled.text,
      );
      await this.audit.intend(intent);
      const at = new Date(intent.at).toISOString();
      const written = await putAgent(this.env.DB, tenant, definition, maxAgents, at);
      if (!written) {
        await this.audit.settle(intent, { landed: false });
        const refused = quotaExceeded(countRefusal("agents", maxAgents!, await agentCount(this.env.DB, tenant)));
        return err(refused.code, refused.message, refused.details);
      }
      const { created, agent, version } = written;
      await this.audit.settle(intent, { landed: true, created, registry_version: version, recovered: false });
      await this.applied(tenant, before, { name: definition.name, text: compiled.text }, compiled);
      return ok({ created, agent });
    }).catch(failure);
  }

  async deleteAgent(tenant: string, name: string): Promise<Result<{ deleted: boolean }>> {
    return this.inTurn(async () => {
      await this.audit.recover();
      const before = await registryHead(this.env.DB, tenant);
      await this.sync(tenant, before);
      await this.readParts();
      const intent = agentWriteIntent(tenant, name, this.writeTime(), this.parts.get(name)?.text ?? null, null);
      await this.audit.intend(intent);
      const { deleted, version } = await deleteAgent(this.env.DB, tenant, name);
      await this.audit.settle(
        intent,
        deleted ? { landed: true, created: false, registry_version: version, recovered: false } : { landed: false },
      );
      await this.applied(tenant, before, { name, text: null });
      return ok({ deleted });
    }).catch(failure);
  }

  /** A write's time, later than this instance's last: recovery tells a put by the `updated_at` it wrote. */
  private writeTime(): number {
    this.lastWriteAt = Math.max(this.now(), this.lastWriteAt + 1);
    return this.lastWriteAt;
  }

  /**
   * After a write of ours: when the registry moved by exactly that write, the new state is the
   * parts held plus the change (no registry read); otherwise someone else wrote too, so read it.
   */
  private async applied(
    tenant: string,
    before: RegistryHead,
    change: { name: string; text: string | null },
    compiled?: CompiledPart,
  ) {
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
      await this.build(tenant, after, rows, compiled);
      return;
    }
    await this.sync(tenant, after);
  }

  /** The built version at `head` (the registry's, read now when null), building it from the registry when it is not. */
  private async sync(tenant: string, at: RegistryHead | null): Promise<KeptVersion> {
    const head = at ?? (await registryHead(this.env.DB, tenant));
    const built = this.built;
    if (built !== null && built.head.version === head.version && built.head.stamp === head.stamp) return built;
    return this.build(tenant, head, await loadDefinitionTexts(this.env.DB, tenant));
  }

  private async build(
    tenant: string,
    head: RegistryHead,
    rows: readonly StoredDefinition[],
    precompiled?: CompiledPart,
  ): Promise<KeptVersion> {
    const started = Date.now();
    await this.readParts();
    const previous = this.built?.shards ?? [];
    // Compiling is timed apart from planning: a change's own cost.
    const changed = changedDefinitions(this.parts, rows);
    const reused = precompiled !== undefined && changed.length === 1 && changed[0]!.text === precompiled.text;
    let compiled: Map<string, CompiledPart>;
    let compileMs: number;
    if (reused) {
      compiled = new Map([[changed[0]!.name, precompiled]]);
      compileMs = precompiled.compile_ms;
    } else if (changed.length === 0) {
      compiled = new Map();
      compileMs = 0;
    } else {
      await tick();
      const compiling = Date.now();
      compiled = compileDefinitions(changed, storedDefinition);
      await tick();
      compileMs = Date.now() - compiling;
      // The clock reads the whole compile, not each part: every part is given its share.
      for (const part of compiled.values()) part.compile_ms = compileMs / compiled.size;
    }
    const plan = planBuild(this.parts, previous.length, rows, compiled);
    const budgets = shardBudgets(plan.parts, plan.shards);
    const members = shardParts(plan.parts, plan.shards);
    const shards: BuiltShard[] = [];
    const linked = new Map<number, ShardSections>();
    let linkMs = 0;
    for (let k = 0; k < plan.shards; k++) {
      const kept = previous[k];
      if (kept !== undefined && previous.length === plan.shards && !plan.dirty.includes(k)) {
        shards.push(kept);
        continue;
      }
      const linkStarted = Date.now();
      const sections = encodeShard(linkShard(members[k]!, budgets[k]!, plan.shards));
      await tick();
      const link_ms = Date.now() - linkStarted;
      linkMs += link_ms;
      linked.set(k, sections);
      shards.push({
        stamp: `${head.stamp}:${head.version}:${k}`,
        bytes: sections.head.byteLength + sections.agents.byteLength + sum(sections.texts) + sum(sections.buckets),
        agents: members[k]!.length,
        link_ms,
      });
    }
    const slowest = plan.compiled
      .map((agent) => ({ agent, ms: plan.parts.get(agent)!.compile_ms }))
      .sort((a, b) => b.ms - a.ms);
    const build: BuildStats = {
      compiled: slowest.slice(0, 5),
      compiled_count: plan.compiled.length,
      compile_ms: compileMs,
      linked_shards: linked.size,
      link_ms: linkMs,
      build_ms: Date.now() - started,
      pattern_instructions: [...plan.parts.values()].reduce((total, p) => total + agentCharge(p.part), 0),
      pattern_budget: PATTERN_BUDGET,
    };
    const version: KeptVersion = { head, version: head.version, stamp: head.stamp, build, shards };
    await this.keepParts(plan.parts, plan.compiled);
    // The sections and the version in one synchronous step, and the object's view with them.
    this.store.keep(version, plan.shards, linked);
    this.parts = plan.parts;
    this.built = version;
    this.generation++;
    this.warm.warm(tenant);
    return version;
  }

  /**
   * The parts compiled by a build and the removal of those gone, before the version that uses
   * them; the version kept so far is forgotten first, so a restart in between builds again.
   */
  private async keepParts(parts: ReadonlyMap<string, CompiledPart>, compiled: readonly string[]) {
    const removed = [...this.parts.keys()].filter((name) => !parts.has(name));
    if (compiled.length === 0 && removed.length === 0) return;
    const storage = this.ctx.storage;
    this.store.keep(null, 0, new Map());
    for (let i = 0; i < compiled.length; i += KEYS_PER_CALL) {
      const batch: Record<string, CompiledPart> = {};
      for (const name of compiled.slice(i, i + KEYS_PER_CALL)) batch[`${PART_PREFIX}${name}`] = parts.get(name)!;
      await storage.put(batch);
    }
    for (let i = 0; i < removed.length; i += KEYS_PER_CALL)
      await storage.delete(removed.slice(i, i + KEYS_PER_CALL).map((name) => `${PART_PREFIX}${name}`));
  }
}

/** A RelayError thrown inside a call (a D1 failure is not one) comes back as a Result. */
function failure(error: unknown): Result<never> {
  if (isRelayError(error)) return err(error.code, error.message, error.details);
  throw error;
}
