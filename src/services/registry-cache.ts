import { compileRuleRouter } from "../routing/rule-router";
import type { RuleRouter } from "../routing/types";
import { loadDefinitions, type RegistryHead } from "../registry/store";
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
