import { AgentDefinition } from "../src/schemas/agent";

/**
 * The agent definitions a handoff needs, read from the tenant's registry in one D1 query
 * (the registry's `getAgent` is one query per agent). Used by the Worker for a transfer
 * (source and target, or the source's whitelist) and by the SessionDO for a return, whose
 * target only the session knows.
 */
export async function agentsByName(db: D1Database, tenant: string, names: readonly string[]): Promise<Map<string, AgentDefinition>> {
  const unique = [...new Set(names)].slice(0, 99);
  const found = new Map<string, AgentDefinition>();
  if (unique.length === 0) return found;
  const placeholders = unique.map((_, i) => `?${i + 2}`).join(", ");
  const { results } = await db
    .prepare(`SELECT definition FROM agents WHERE tenant = ?1 AND name IN (${placeholders})`)
    .bind(tenant, ...unique)
    .all<{ definition: string }>();
  for (const row of results) {
    const agent = AgentDefinition.parse(JSON.parse(row.definition));
    found.set(agent.name, agent);
  }
  return found;
}
