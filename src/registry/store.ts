import { AgentDefinition, type StoredAgent } from "../schemas/agent";

/**
 * The agent registry in D1, scoped by tenant. Every write bumps the tenant's registry
 * version in the same batch, so compiled routers know when to rebuild.
 */

interface AgentRow {
  name: string;
  definition: string;
  created_at: string;
  updated_at: string;
}

function toStored(row: AgentRow): StoredAgent {
  return {
    definition: parseDefinition(row.definition),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The statement that moves the tenant's registry version (batched with every registry write). */
export function bumpVersion(db: D1Database, tenant: string): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO registry_versions (tenant, version, stamp) VALUES (?1, 1, ?2)
       ON CONFLICT (tenant) DO UPDATE SET version = version + 1, stamp = excluded.stamp`,
    )
    .bind(tenant, crypto.randomUUID());
}

/**
 * `bumpVersion` for a batch whose previous statement may have changed nothing (a delete of
 * nothing): the version moves only if it changed a row, so a refused delete costs no rebuild.
 */
export function bumpVersionIfChanged(db: D1Database, tenant: string): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO registry_versions (tenant, version, stamp) SELECT ?1, 1, ?2 WHERE changes() > 0
       ON CONFLICT (tenant) DO UPDATE SET version = version + 1, stamp = excluded.stamp`,
    )
    .bind(tenant, crypto.randomUUID());
}

/**
 * Creates or replaces an agent; `created` tells which, and `version` is the registry's version
 * the write made (read in the same batch). Null when the tenant holds `limit` agents and `name`
 * is new (its quota, docs/operations.md) — decided in the one statement that writes, so
 * concurrent writes cannot pass the limit together; the version then does not move. `now` is
 * the time written as `updated_at` (and `created_at` for a new agent): the router object names
 * it before the write, so that after a crash it can tell whether the write landed.
 */
export async function putAgent(
  db: D1Database,
  tenant: string,
  definition: AgentDefinition,
  limit: number | null = null,
  now: string = new Date().toISOString(),
): Promise<{ created: boolean; agent: StoredAgent; version: number } | null> {
  const [upsert, , head] = await db.batch<AgentRow & { created: number } & RegistryHead>([
    db
      .prepare(
        `INSERT INTO agents (tenant, name, definition, created_at, updated_at)
         SELECT ?1, ?2, ?3, ?4, ?4
         WHERE ?5 IS NULL
            OR EXISTS (SELECT 1 FROM agents WHERE tenant = ?1 AND name = ?2)
            OR (SELECT COUNT(*) FROM agents WHERE tenant = ?1) < ?5
         ON CONFLICT (tenant, name) DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at
         RETURNING name, definition, created_at, updated_at, (created_at = ?4 AND updated_at = ?4) AS created`,
      )
      .bind(tenant, definition.name, definitionText(definition), now, limit),
    bumpVersionIfChanged(db, tenant),
    registryHeadStatement(db, tenant),
  ]);
  const row = upsert?.results[0];
  return row ? { created: row.created === 1, agent: toStored(row), version: head?.results[0]?.version ?? 0 } : null;
}

/** How many agents the tenant holds. */
export async function agentCount(db: D1Database, tenant: string): Promise<number> {
  return (await db.prepare("SELECT COUNT(*) AS n FROM agents WHERE tenant = ?1").bind(tenant).first<number>("n")) ?? 0;
}

export async function getAgent(db: D1Database, tenant: string, name: string): Promise<StoredAgent | null> {
  const row = await db
    .prepare("SELECT name, definition, created_at, updated_at FROM agents WHERE tenant = ?1 AND name = ?2")
    .bind(tenant, name)
    .first<AgentRow>();
  return row ? toStored(row) : null;
}

/** One page of agents in name order, after `after` (exclusive). */
export async function listAgents(
  db: D1Database,
  tenant: string,
  { after, limit }: { after?: string; limit: number },
): Promise<{ agents: StoredAgent[]; next: string | null }> {
  const { results } = await db
    .prepare(
      `SELECT name, definition, created_at, updated_at FROM agents
       WHERE tenant = ?1 AND name > ?2 ORDER BY name LIMIT ?3`,
    )
    .bind(tenant, after ?? "", limit + 1)
    .all<AgentRow>();
  const page = results.slice(0, limit);
  const next = results.length > limit ? (page.at(-1)?.name ?? null) : null;
  return { agents: page.map(toStored), next };
}

/** Every agent definition of a tenant, in name order (what the routers compile). */
export async function loadDefinitions(db: D1Database, tenant: string): Promise<AgentDefinition[]> {
  const { results } = await db
    .prepare("SELECT definition FROM agents WHERE tenant = ?1 ORDER BY name")
    .bind(tenant)
    .all<{ definition: string }>();
  return results.map((row) => parseDefinition(row.definition));
}

/** Every agent of a tenant as stored (name order): the router object compiles what changed. */
export async function loadDefinitionTexts(db: D1Database, tenant: string): Promise<{ name: string; text: string }[]> {
  const { results } = await db
    .prepare("SELECT name, definition AS text FROM agents WHERE tenant = ?1 ORDER BY name")
    .bind(tenant)
    .all<{ name: string; text: string }>();
  return results;
}

/** The registry's current version and write stamp. */
export async function registryHead(db: D1Database, tenant: string): Promise<RegistryHead> {
  return (await registryHeadStatement(db, tenant).first<RegistryHead>()) ?? { version: 0, stamp: "" };
}

/** The text a definition is stored as (what `putAgent` writes). */
export function definitionText(definition: AgentDefinition): string {
  return JSON.stringify(definition);
}

/** The stored text's definition (validated once per distinct text per isolate). */
export function storedDefinition(text: string): AgentDefinition {
  return parseDefinition(text);
}

/** Deletes an agent; `deleted` is false when there was none, `version` the registry's version after (read in the same batch). */
export async function deleteAgent(
  db: D1Database,
  tenant: string,
  name: string,
): Promise<{ deleted: boolean; version: number }> {
  const [deleted, , head] = await db.batch<RegistryHead>([
    db.prepare("DELETE FROM agents WHERE tenant = ?1 AND name = ?2").bind(tenant, name),
    bumpVersionIfChanged(db, tenant),
    registryHeadStatement(db, tenant),
  ]);
  return { deleted: (deleted?.meta.changes ?? 0) > 0, version: head?.results[0]?.version ?? 0 };
}

/** The registry's current version and write stamp, as one statement to batch with others. */
export function registryHeadStatement(db: D1Database, tenant: string): D1PreparedStatement {
  return db.prepare("SELECT version, stamp FROM registry_versions WHERE tenant = ?1").bind(tenant);
}

export interface RegistryHead {
  version: number;
  /** Random per write; "" for a tenant that never wrote. */
  stamp: string;
}

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

/**
 * Several agents of a tenant in one D1 query (at most 99 names), by name. Missing names are
 * simply absent. Handoffs use it: the Worker for a transfer's source and target (or the
 * source's whitelist), the SessionDO for a return, whose target only the session knows.
 */
export async function agentsByName(
  db: D1Database,
  tenant: string,
  names: readonly string[],
): Promise<Map<string, AgentDefinition>> {
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
