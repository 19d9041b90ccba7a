import { AgentDefinition } from "../src/schemas/agent";

/**
 * The agent definitions a handoff needs, read from the tenant's registry in one D1 query
 * (the registry's `getAgent` is one query per agent). Used by the Worker for a transfer
 * (source and target, or the source's whitelist) and by the SessionDO for a return, whose
 * target only the session knows.
 */

/** Stored definitions already validated in this isolate, by their exact JSON text. */
const parsed = new Map<string, AgentDefinition>();
const PARSED_MAX = 512;

/**
 * The schema's parse of a stored definition, once per distinct text per isolate: the same
 * text always parses to the same value, so only the zod pass is saved (D1 is still read on
 * every handoff, so a registry write is seen at once). Callers share the returned object
 * and must not mutate it.
 */
function parseDefinition(text: string): AgentDefinition {
  const cached = parsed.get(text);
  if (cached) return cached;
  const agent = AgentDefinition.parse(JSON.parse(text));
  // Bounded: past the cap the oldest entry goes (Map keeps insertion order).
  if (parsed.size >= PARSED_MAX) parsed.delete(parsed.keys().next().value!);
  parsed.set(text, agent);
  return agent;
}

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
    const agent = parseDefinition(row.definition);
    found.set(agent.name, agent);
  }
  return found;
}
