import { RoutingConfigPatch } from "../schemas/routing";

/** The tenant layer of routing configuration, stored in D1 as a validated patch. */

export function tenantConfigStatement(db: D1Database, tenant: string): D1PreparedStatement {
  return db.prepare("SELECT config FROM routing_config WHERE tenant = ?1").bind(tenant);
}

export function parseTenantConfig(row: { config: string } | null | undefined): RoutingConfigPatch | null {
  return row ? RoutingConfigPatch.parse(JSON.parse(row.config)) : null;
}

export async function getTenantConfig(db: D1Database, tenant: string): Promise<RoutingConfigPatch | null> {
  return parseTenantConfig(await tenantConfigStatement(db, tenant).first<{ config: string }>());
}

export async function putTenantConfig(db: D1Database, tenant: string, patch: RoutingConfigPatch): Promise<void> {
  await db
    .prepare(
      `INSERT INTO routing_config (tenant, config, updated_at) VALUES (?1, ?2, ?3)
       ON CONFLICT (tenant) DO UPDATE SET config = excluded.config, updated_at = excluded.updated_at`,
    )
    .bind(tenant, JSON.stringify(patch), new Date().toISOString())
    .run();
}

export async function deleteTenantConfig(db: D1Database, tenant: string): Promise<boolean> {
  const result = await db.prepare("DELETE FROM routing_config WHERE tenant = ?1").bind(tenant).run();
  return result.meta.changes > 0;
}
