import * as z from "zod";
import { AgentName } from "../schemas/agent";
import type { McpConfigInput, McpConfigView } from "../schemas/mcp-server";

/**
 * The tenant's `mcp` settings in D1 (migration 0017, docs/mcp-server.md): one row per tenant,
 * parsed on read by its format version. No row: the defaults (every agent exposed).
 */

const Row = z.object({
  format: z.literal(1),
  expose: z
    .string()
    .nullable()
    .transform((text) => (text === null ? null : z.array(AgentName).parse(JSON.parse(text)))),
  updated_at: z.string(),
});

const DEFAULTS: McpConfigView = { expose: null, updated_at: null };

/** The tenant's settings, or the defaults when it has set none. */
export async function getMcpConfig(db: D1Database, tenant: string): Promise<McpConfigView> {
  const row = await db
    .prepare("SELECT format, expose, updated_at FROM mcp_config WHERE tenant = ?1")
    .bind(tenant)
    .first<unknown>();
  if (!row) return DEFAULTS;
  const { expose, updated_at } = Row.parse(row);
  return { expose, updated_at };
}

/** Replaces the tenant's settings. */
export async function putMcpConfig(db: D1Database, tenant: string, input: McpConfigInput): Promise<McpConfigView> {
  const now = new Date().toISOString();
  const expose = input.expose === undefined ? null : input.expose;
  await db
    .prepare(
      `INSERT INTO mcp_config (tenant, format, expose, updated_at) VALUES (?1, 1, ?2, ?3)
       ON CONFLICT (tenant) DO UPDATE SET format = 1, expose = excluded.expose, updated_at = excluded.updated_at`,
    )
    .bind(tenant, expose === null ? null : JSON.stringify(expose), now)
    .run();
  return { expose, updated_at: now };
}

/** Clears the tenant's settings (back to the defaults). */
export async function deleteMcpConfig(db: D1Database, tenant: string): Promise<McpConfigView> {
  await db.prepare("DELETE FROM mcp_config WHERE tenant = ?1").bind(tenant).run();
  return DEFAULTS;
}
