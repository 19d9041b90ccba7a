import type { Env } from "../env";
import { unwrap } from "../errors";
import { parseTenantConfig, tenantConfigStatement } from "../registry/config-store";
import { subscribedStatement } from "../registry/event-subscriptions";
import { loadDefinitions, type RegistryHead, registryHeadStatement } from "../registry/store";
import { parseTelemetryConfig, telemetryConfigStatement } from "../registry/telemetry-config-store";
import { loadTools } from "../registry/tool-store";
import { holdRouter, routerBudget, touchRouter } from "../routing/router-budget";
import { decodeShard, unpackSections } from "../routing/router-codec";
import type { RouteAgent } from "../routing/router-image";
import { NO_DECISION } from "../routing/rule-decision";
import { type CompiledRuleRouter, routerFromShards, type WrappedShard, wrapShard } from "../routing/rule-router";
import { sharedShards, shareShard } from "../routing/shard-pool";
import type { RuleDecision, RuleRouter } from "../routing/types";
import type { BuildStats, RoutedByObject, RouteNeeds } from "../rpc/router";
import { routerRpc } from "../rpc/stubs";
import type { AgentDefinition } from "../schemas/agent";
import type { RoutingConfigPatch } from "../schemas/routing";
import type { TelemetryConfig } from "../schemas/telemetry";
import type { ToolDefinition } from "../schemas/tool";

/**
 * The registry as every reader sees it, per isolate: the Worker (routing, session
 * creation, handoffs, capability match) and the SessionDO (handoff validation) read agent
 * definitions through here, never from D1 directly. A registry write bumps the tenant's
 * version in D1 and invalidates this isolate at once; other isolates see it within
 * HEAD_TTL_MS.
 */

/** A tenant's agent and tool definitions at one registry version. */
export interface AgentDirectory {
  tenant: string;
  version: number;
  /** In name order. */
  agents: AgentDefinition[];
  byName: ReadonlyMap<string, AgentDefinition>;
  /** The tool registry, by name. */
  tools: ReadonlyMap<string, ToolDefinition>;
}

/** What a route reads of a tenant's router: the version that decides, its agents and its rule tier. */
export interface RoutingRegistry {
  /** The router this isolate holds, or the router object's answer for one input (while it holds none). */
  source: "isolate" | "object";
  /** The registry version this router was built from: the one that decides. */
  version: number;
  /** Every agent (enabled or not), in name order. */
  agents: readonly RouteAgent[];
  byName: ReadonlyMap<string, RouteAgent>;
  rules: RuleRouter;
}

/**
 * A tenant's router as this isolate holds it: loaded from the tenant's router object at one
 * registry version (never compiled here), with what the build reported.
 */
export interface CompiledRegistry extends RoutingRegistry {
  source: "isolate";
  tenant: string;
  stamp: string;
  agents: RouteAgent[];
  rules: CompiledRuleRouter;
  build: BuildStats;
  /** This isolate's load of it: the call to the router object and the wrapping, ms. */
  load_ms: number;
  /** Shards reused from the version this isolate held before. */
  reused_shards: number;
  shards: { stamp: string; wrapped: WrappedShard }[];
}

/**
 * Per-isolate caches keyed by `tenant@version:stamp`; the promise is cached, not the
 * result, so concurrent readers share one D1 read and one compilation. Failed loads are
 * not cached; a new version of a tenant drops its older entries.
 */
const directories = new Map<string, Promise<AgentDirectory>>();

function cached<T>(
  cache: Map<string, Promise<T>>,
  tenant: string,
  head: RegistryHead,
  load: () => Promise<T>,
): Promise<T> {
  const key = `${tenant}@${head.version}:${head.stamp}`;
  let entry = cache.get(key);
  if (!entry) {
    entry = load();
    cache.set(key, entry);
    entry.then(
      () => {
        for (const other of cache.keys()) if (other.startsWith(`${tenant}@`) && other !== key) cache.delete(other);
      },
      () => cache.delete(key),
    );
  }
  return entry;
}

/** The tenant's agent and tool definitions at its current registry version (one D1 read per version per isolate). */
export async function agentDirectory(db: D1Database, tenant: string): Promise<AgentDirectory> {
  const { head } = await tenantHead(db, tenant);
  return directoryAt(db, tenant, head);
}

/** Per tenant: the newest directory this isolate loaded, and the head it was loaded at. */
const loadedDirectories = new Map<string, { head: RegistryHead; directory: AgentDirectory }>();

function directoryAt(db: D1Database, tenant: string, head: RegistryHead): Promise<AgentDirectory> {
  return cached(directories, tenant, head, async () => {
    const [agents, tools] = await Promise.all([loadDefinitions(db, tenant), loadTools(db, tenant)]);
    const directory = {
      tenant,
      version: head.version,
      agents,
      byName: new Map(agents.map((a) => [a.name, a])),
      tools: new Map(tools.map((t) => [t.name, t])),
    };
    const held = loadedDirectories.get(tenant);
    if (!held || held.head.version <= head.version) loadedDirectories.set(tenant, { head, directory });
    return directory;
  });
}

/**
 * The tenant's agent directory, only when this isolate holds it at the head it read within
 * HEAD_TTL_MS: a synchronous answer for code inside a storage transaction (null: unknown).
 */
export function knownDirectory(tenant: string, now = Date.now()): AgentDirectory | null {
  const head = heads.get(tenant);
  const held = loadedDirectories.get(tenant);
  if (head?.settled === undefined || head.expires <= now || !held) return null;
  const { version, stamp } = head.settled.head;
  return held.head.version === version && held.head.stamp === stamp ? held.directory : null;
}

/** Per tenant: the router this isolate holds, and the load of a newer one under way. */
interface RouterSlot {
  current: CompiledRegistry | null;
  loading: Promise<CompiledRegistry> | null;
  /** The head the load under way was started for. */
  loadingFor: string;
  /** The head whose router is bigger than the isolate's whole router budget: served, never held. */
  oversized: string | null;
}
const routers = new Map<string, RouterSlot>();

const headKey = (head: RegistryHead) => `${head.version}:${head.stamp}`;

/** Whether this isolate holds `registry` as the tenant's router (not let go, not past the budget). */
export function holdsRouter(tenant: string, registry: CompiledRegistry): boolean {
  return routers.get(tenant)?.current === registry;
}

/** Keeps a loaded router as the tenant's current one, within the isolate's router budget. */
function keep(slot: RouterSlot, loaded: CompiledRegistry, budget: number): void {
  const held = holdRouter(
    slot,
    loaded.shards.map((s) => s.wrapped),
    () => {
      slot.current = null;
    },
    budget,
  );
  slot.current = held ? loaded : null;
  slot.oversized = held ? null : headKey(loaded);
}

/**
 * The tenant's router for a route (docs/scaling.md, "Serving while the next version builds"):
 * the one this isolate holds when it is at `head`; otherwise the load of `head`'s version
 * starts (once), and meanwhile the version held answers — the decision names it. Only an
 * isolate that holds none waits for the load. `background` keeps a load alive past the
 * response (`ctx.waitUntil`).
 */
export function routerAt(
  env: Pick<Env, "ROUTERS" | "RELAY_ROUTER_BUDGET_MB">,
  tenant: string,
  head: RegistryHead,
  background?: (work: Promise<unknown>) => void,
  wait = false,
): Promise<CompiledRegistry> {
  let slot = routers.get(tenant);
  if (!slot) {
    slot = { current: null, loading: null, loadingFor: "", oversized: null };
    routers.set(tenant, slot);
  }
  const current = slot.current;
  touchRouter(slot);
  if (current !== null && headKey(current) === headKey(head)) return Promise.resolve(current);
  if (slot.loading === null || slot.loadingFor !== headKey(head)) {
    const loading = loadRouter(env, tenant, current);
    const entry = slot;
    entry.loading = loading;
    entry.loadingFor = headKey(head);
    loading.then(
      (loaded) => {
        if (entry.current === null || loaded.version >= entry.current.version) keep(entry, loaded, routerBudget(env));
        if (entry.loading === loading) entry.loading = null;
      },
      () => {
        if (entry.loading === loading) entry.loading = null;
      },
    );
    background?.(loading.catch(() => undefined));
  }
  return current !== null && !wait ? Promise.resolve(current) : slot.loading!;
}

/** Loads the tenant's current router now (after a write through this isolate: read your writes). */
export async function refreshRouter(
  env: Pick<Env, "ROUTERS" | "DB" | "RELAY_ROUTER_BUDGET_MB">,
  tenant: string,
): Promise<void> {
  invalidateTenant(tenant);
  const { head } = await tenantHead(env.DB, tenant);
  await routerAt(env, tenant, head, undefined, true);
}

async function loadRouter(
  env: Pick<Env, "ROUTERS" | "RELAY_ROUTER_BUDGET_MB">,
  tenant: string,
  held: CompiledRegistry | null,
): Promise<CompiledRegistry> {
  const started = Date.now();
  const have = new Map((held?.shards ?? []).map((s) => [s.stamp, s.wrapped]));
  // Shards the tenant's router object holds, when it runs in this isolate, are not sent again.
  const received = sharedShards(tenant);
  for (const stamp of have.keys()) received.delete(stamp);
  let version = unwrap(await routerRpc(env, tenant).load(tenant, [...have.keys(), ...received.keys()]));
  // A large registry comes over several answers; a new version meanwhile starts the count again.
  for (let calls = 1; ; calls++) {
    for (const [k, packed] of version.shards.entries()) {
      if (packed === null) continue;
      const wrapped = wrapShard(decodeShard(unpackSections(packed)));
      received.set(version.stamps[k]!, wrapped);
      shareShard(tenant, version.stamps[k]!, wrapped);
      // Each shard is decoded in a turn of its own: other requests run between two.
      await yieldTurn();
    }
    const missing = version.stamps.filter((stamp) => !have.has(stamp) && !received.has(stamp));
    if (missing.length === 0) break;
    if (calls > 2 * version.stamps.length) throw new Error("the router object kept changing while it was loaded");
    version = unwrap(await routerRpc(env, tenant).load(tenant, [...have.keys(), ...received.keys()]));
  }
  let reused = 0;
  const shards = version.stamps.map((stamp) => {
    const kept = have.get(stamp);
    if (kept !== undefined) {
      reused++;
      return { stamp, wrapped: kept };
    }
    return { stamp, wrapped: received.get(stamp)! };
  });
  const rules = routerFromShards(shards.map((s) => s.wrapped));
  // Each shard carries its agents; the registry's list is theirs in name order.
  const agents = shards.flatMap((s) => s.wrapped.image.agents).sort((a, b) => (a.name < b.name ? -1 : 1));
  return {
    source: "isolate",
    tenant,
    version: version.version,
    stamp: version.stamp,
    agents,
    byName: new Map(agents.map((a) => [a.name, a])),
    rules,
    build: version.build,
    load_ms: Date.now() - started,
    reused_shards: reused,
    shards,
  };
}

const yieldTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/**
 * How long after a route answered by the router object the isolate starts loading the version.
 * A load is background work in pieces of a few ms (a shard decoded, an answer read), but other
 * work of the isolate waits behind each piece; a response written meanwhile waits for every
 * piece that runs before it is out.
 */
export const LOAD_DELAY_MS = 50;

/**
 * The router for one route of `input` (docs/scaling.md, "The first route of a fresh isolate"):
 * the one this isolate holds, as `routerAt` gives it; or, while it holds none, the router
 * object's decision of this input from the version it keeps (no load awaited), after which this
 * isolate starts loading that version. Should the object fail to answer, the route waits for
 * the load instead.
 */
export async function routerFor(
  env: Pick<Env, "ROUTERS" | "RELAY_ROUTER_BUDGET_MB">,
  tenant: string,
  head: RegistryHead,
  input: string,
  needs: RouteNeeds,
  background?: (work: Promise<unknown>) => void,
): Promise<RoutingRegistry> {
  const slot = routers.get(tenant);
  if (slot?.current != null) return routerAt(env, tenant, head, background);
  let answer: RoutedByObject;
  try {
    answer = unwrap(await routerRpc(env, tenant).route(tenant, input, needs));
  } catch {
    return routerAt(env, tenant, head, background, true);
  }
  // A router past the whole budget is not loaded again for the next route: the object decides.
  if (slot?.oversized === headKey(head)) return answeredRegistry(answer);
  // The load starts a little later (a request that needs the router sooner starts it at once),
  // so that neither it nor the object's answers to it hold up this route's response.
  const load = new Promise((resolve) => setTimeout(resolve, LOAD_DELAY_MS)).then(() =>
    routerAt(env, tenant, head, background),
  );
  background?.(load.catch(() => undefined));
  load.catch(() => undefined);
  return answeredRegistry(answer);
}

/** A registry for the one input the router object decided. */
function answeredRegistry({ version, decision, agents: listed }: RoutedByObject): RoutingRegistry {
  const agents = (JSON.parse(new TextDecoder().decode(listed)) as RouteAgent[]).sort((a, b) =>
    a.name < b.name ? -1 : 1,
  );
  let byName: Map<string, RouteAgent> | undefined;
  const decided: RuleDecision = decision ?? { ...NO_DECISION, candidates: [] };
  const rules: RuleRouter = { decide: () => decided, decideInTurns: async () => decided, memoryBytes: 0 };
  return {
    source: "object",
    version,
    agents,
    // Read by session creation only: built when first asked for.
    get byName() {
      byName ??= new Map(agents.map((a) => [a.name, a]));
      return byName;
    },
    rules,
  };
}

/**
 * How long an isolate trusts the registry head and tenant config it last read. Writes made
 * through this isolate invalidate at once; other isolates see them within this time. It
 * keeps D1 off the routing hot path (one D1 round trip costs more than the route itself).
 */
export const HEAD_TTL_MS = 1000;

export interface TenantHead {
  head: RegistryHead;
  tenantConfig: RoutingConfigPatch | null;
  /** The tenant has an events_url (webhooks out). */
  subscribed: boolean;
  /** The tenant's trace export settings; null when it exports nothing (docs/observability.md, Export). */
  telemetry: TelemetryConfig | null;
}

const heads = new Map<string, { value: Promise<TenantHead>; expires: number; settled?: TenantHead }>();

/** The registry head and stored routing config of a tenant: one D1 batch at most per TTL. */
export function tenantHead(db: D1Database, tenant: string, now = Date.now()): Promise<TenantHead> {
  const cached = heads.get(tenant);
  if (cached && cached.expires > now) return cached.value;
  const value = readHead(db, tenant);
  const entry: { value: Promise<TenantHead>; expires: number; settled?: TenantHead } = {
    value,
    expires: now + HEAD_TTL_MS,
  };
  heads.set(tenant, entry);
  value.then(
    (head) => {
      entry.settled = head;
    },
    () => heads.delete(tenant),
  );
  return value;
}

/**
 * True only when this isolate read, within HEAD_TTL_MS, that the tenant has no events_url:
 * a synchronous answer for code inside a storage transaction (unknown is false). A
 * subscription set through this isolate counts at once, through another within the TTL.
 */
export function knownUnsubscribed(tenant: string, now = Date.now()): boolean {
  const cached = heads.get(tenant);
  return cached?.settled !== undefined && cached.expires > now && !cached.settled.subscribed;
}

/**
 * The tenant's trace export as this isolate read it within HEAD_TTL_MS, for code inside a
 * storage transaction: `null` it exports nothing, a number its sample ratio, `undefined`
 * not known (the export is queued and decided when sent).
 */
export function knownTelemetryRatio(tenant: string, now = Date.now()): number | null | undefined {
  const cached = heads.get(tenant);
  return cached?.settled !== undefined && cached.expires > now
    ? (cached.settled.telemetry?.sample_ratio ?? null)
    : undefined;
}

/** Forgets what this isolate knows of a tenant's registry and config (after a write). */
export function invalidateTenant(tenant: string): void {
  heads.delete(tenant);
}

/** The telemetry settings of a head: a row that does not parse exports nothing, and never fails a route. */
function telemetryOf(row: unknown): TelemetryConfig | null {
  try {
    return parseTelemetryConfig(row);
  } catch (error) {
    console.warn("telemetry: a settings row does not parse", error);
    return null;
  }
}

async function readHead(db: D1Database, tenant: string): Promise<TenantHead> {
  const [headRows, configRows, subscribedRows, telemetryRows] = await db.batch([
    registryHeadStatement(db, tenant),
    tenantConfigStatement(db, tenant),
    subscribedStatement(db, tenant),
    telemetryConfigStatement(db, tenant),
  ]);
  const telemetry = telemetryOf(telemetryRows?.results[0]);
  return {
    head: (headRows?.results[0] as RegistryHead | undefined) ?? { version: 0, stamp: "" },
    tenantConfig: parseTenantConfig(configRows?.results[0] as { config: string } | undefined),
    subscribed: (subscribedRows?.results.length ?? 0) > 0,
    telemetry,
  };
}
