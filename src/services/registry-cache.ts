import { parseTenantConfig, tenantConfigStatement } from "../registry/config-store";
import { compileRuleRouter } from "../routing/rule-router";
import type { RoutingConfigPatch } from "../schemas/routing";
import type { RuleRouter } from "../routing/types";
import { loadDefinitions, registryHeadStatement, type RegistryHead } from "../registry/store";
import type { AgentDefinition } from "../schemas/agent";

/** A tenant's registry as the router needs it, compiled once per registry version. */
export interface CompiledRegistry {
  tenant: string;
  version: number;
  agents: AgentDefinition[];
  rules: RuleRouter;
  compile_ms: number;
}

/**
 * Compiled registries, per isolate. A registry write bumps the tenant's version in D1;
 * the next route sees the new version and recompiles. Concurrent routes share one
 * compilation (the promise is cached, not the result).
 */
const compiled = new Map<string, Promise<CompiledRegistry>>();

export function compiledRegistry(db: D1Database, tenant: string, { version, stamp }: RegistryHead): Promise<CompiledRegistry> {
  const key = `${tenant}@${version}:${stamp}`;
  let entry = compiled.get(key);
  if (!entry) {
    entry = compile(db, tenant, version);
    compiled.set(key, entry);
    // Failed compilations are not cached; older versions of this tenant are dropped.
    entry.then(
      () => {
        for (const other of compiled.keys()) if (other.startsWith(`${tenant}@`) && other !== key) compiled.delete(other);
      },
      () => compiled.delete(key),
    );
  }
  return entry;
}

async function compile(db: D1Database, tenant: string, version: number): Promise<CompiledRegistry> {
  const agents = await loadDefinitions(db, tenant);
  const started = performance.now();
  const rules = compileRuleRouter(agents);
  return { tenant, version, agents, rules, compile_ms: performance.now() - started };
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
}

const heads = new Map<string, { value: Promise<TenantHead>; expires: number }>();

/** The registry head and stored routing config of a tenant: one D1 batch at most per TTL. */
export function tenantHead(db: D1Database, tenant: string, now = Date.now()): Promise<TenantHead> {
  const cached = heads.get(tenant);
  if (cached && cached.expires > now) return cached.value;
  const value = readHead(db, tenant);
  heads.set(tenant, { value, expires: now + HEAD_TTL_MS });
  value.catch(() => heads.delete(tenant));
  return value;
}

/** Forgets what this isolate knows of a tenant's registry and config (after a write). */
export function invalidateTenant(tenant: string): void {
  heads.delete(tenant);
}

async function readHead(db: D1Database, tenant: string): Promise<TenantHead> {
  const [headRows, configRows] = await db.batch([registryHeadStatement(db, tenant), tenantConfigStatement(db, tenant)]);
  return {
    head: (headRows?.results[0] as RegistryHead | undefined) ?? { version: 0, stamp: "" },
    tenantConfig: parseTenantConfig(configRows?.results[0] as { config: string } | undefined),
  };
}
