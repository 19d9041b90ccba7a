import { type StoredTool, ToolDefinition } from "../schemas/tool";
import { bumpVersionIfChanged } from "./store";

/**
 * The tool registry in D1, scoped by tenant, beside the agents: every write bumps the
 * tenant's registry version in the same batch, so readers see agents and tools at one version.
 */

interface ToolRow {
  name: string;
  definition: string;
  created_at: string;
  updated_at: string;
}

function toStored(row: ToolRow): StoredTool {
  return {
    definition: ToolDefinition.parse(JSON.parse(row.definition)),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/**
 * Creates or replaces a tool; `created` tells which. Null when the tenant holds `limit` tools and
 * `name` is new (its quota, docs/operations.md) — decided in the one statement that writes, so
 * concurrent writes cannot pass the limit together; the version then does not move.
 */
export async function putTool(
  db: D1Database,
  tenant: string,
  definition: ToolDefinition,
  limit: number | null = null,
): Promise<{ created: boolean; tool: StoredTool } | null> {
  const now = new Date().toISOString();
  const [upsert] = await db.batch<ToolRow & { created: number }>([
    db
      .prepare(
        `INSERT INTO tools (tenant, name, definition, created_at, updated_at)
         SELECT ?1, ?2, ?3, ?4, ?4
         WHERE ?5 IS NULL
            OR EXISTS (SELECT 1 FROM tools WHERE tenant = ?1 AND name = ?2)
            OR (SELECT COUNT(*) FROM tools WHERE tenant = ?1) < ?5
         ON CONFLICT (tenant, name) DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at
         RETURNING name, definition, created_at, updated_at, (created_at = ?4 AND updated_at = ?4) AS created`,
      )
      .bind(tenant, definition.name, JSON.stringify(definition), now, limit),
    bumpVersionIfChanged(db, tenant),
  ]);
  const row = upsert?.results[0];
  return row ? { created: row.created === 1, tool: toStored(row) } : null;
}

/** How many tools the tenant holds. */
export async function toolCount(db: D1Database, tenant: string): Promise<number> {
  return (await db.prepare("SELECT COUNT(*) AS n FROM tools WHERE tenant = ?1").bind(tenant).first<number>("n")) ?? 0;
}

export async function getTool(db: D1Database, tenant: string, name: string): Promise<StoredTool | null> {
  const row = await db
    .prepare("SELECT name, definition, created_at, updated_at FROM tools WHERE tenant = ?1 AND name = ?2")
    .bind(tenant, name)
    .first<ToolRow>();
  return row ? toStored(row) : null;
}

/** One page of tools in name order, after `after` (exclusive). */
export async function listTools(
  db: D1Database,
  tenant: string,
  { after, limit }: { after?: string; limit: number },
): Promise<{ tools: StoredTool[]; next: string | null }> {
  const { results } = await db
    .prepare(
      "SELECT name, definition, created_at, updated_at FROM tools WHERE tenant = ?1 AND name > ?2 ORDER BY name LIMIT ?3",
    )
    .bind(tenant, after ?? "", limit + 1)
    .all<ToolRow>();
  const page = results.slice(0, limit);
  return { tools: page.map(toStored), next: results.length > limit ? (page.at(-1)?.name ?? null) : null };
}

/** Every tool of a tenant, in name order (what the runtime offers from). */
export async function loadTools(db: D1Database, tenant: string): Promise<ToolDefinition[]> {
  const { results } = await db
    .prepare("SELECT definition FROM tools WHERE tenant = ?1 ORDER BY name")
    .bind(tenant)
    .all<{ definition: string }>();
  return results.map((row) => ToolDefinition.parse(JSON.parse(row.definition)));
}

export async function deleteTool(db: D1Database, tenant: string, name: string): Promise<boolean> {
  const [deleted] = await db.batch([
    db.prepare("DELETE FROM tools WHERE tenant = ?1 AND name = ?2").bind(tenant, name),
    bumpVersionIfChanged(db, tenant),
  ]);
  return (deleted?.meta.changes ?? 0) > 0;
}
