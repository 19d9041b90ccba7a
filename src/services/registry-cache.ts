import { parseTenantConfig, tenantConfigStatement } from "../registry/config-store";
import { subscribedStatement } from "../registry/event-subscriptions";
import { loadDefinitions, type RegistryHead, registryHeadStatement } from "../registry/store";
import { loadTools } from "../registry/tool-store";
import { compileRuleRouter } from "../routing/rule-router";
import type { RuleRouter } from "../routing/types";
import type { AgentDefinition } from "../schemas/agent";
import type { RoutingConfigPatch } from "../schemas/routing";
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

/** A tenant's registry as the router needs it, compiled once per registry version. */
export interface CompiledRegistry extends AgentDirectory {
  rules: RuleRouter;
  compile_ms: number;
}

/**
 * Per-isolate caches keyed by `tenant@version:stamp`; the promise is cached, not the
 * result, so concurrent readers share one D1 read and one compilation. Failed loads are
 * not cached; a new version of a tenant drops its older entries.
 */
const directories = new Map<string, Promise<AgentDirectory>>();
const compiled = new Map<string, Promise<CompiledRegistry>>();

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

function directoryAt(db: D1Database, tenant: string, head: RegistryHead): Promise<AgentDirectory> {
  return cached(directories, tenant, head, async () => {
    const [agents, tools] = await Promise.all([loadDefinitions(db, tenant), loadTools(db, tenant)]);
    return {
      tenant,
      version: head.version,
      agents,
      byName: new Map(agents.map((a) => [a.name, a])),
      tools: new Map(tools.map((t) => [t.name, t])),
    };
  });
}

export function compiledRegistry(db: D1Database, tenant: string, head: RegistryHead): Promise<CompiledRegistry> {
  return cached(compiled, tenant, head, async () => {
    const directory = await directoryAt(db, tenant, head);
    const started = performance.now();
    const rules = compileRuleRouter(directory.agents);
    return { ...directory, rules, compile_ms: performance.now() - started };
  });
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

/** Forgets what this isolate knows of a tenant's registry and config (after a write). */
export function invalidateTenant(tenant: string): void {
  heads.delete(tenant);
}

async function readHead(db: D1Database, tenant: string): Promise<TenantHead> {
  const [headRows, configRows, subscribedRows] = await db.batch([
    registryHeadStatement(db, tenant),
    tenantConfigStatement(db, tenant),
    subscribedStatement(db, tenant),
  ]);
  return {
    head: (headRows?.results[0] as RegistryHead | undefined) ?? { version: 0, stamp: "" },
    tenantConfig: parseTenantConfig(configRows?.results[0] as { config: string } | undefined),
    subscribed: (subscribedRows?.results.length ?? 0) > 0,
  };
}
