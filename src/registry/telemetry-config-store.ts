import * as z from "zod";
import type { TelemetryConfig, TelemetryConfigInput, TelemetryStats } from "../schemas/telemetry";
import { SecretHeaders } from "../schemas/vault";

/**
 * The tenant's trace export settings and counters in D1 (migration 0018, docs/observability.md,
 * Export): one settings row per tenant, parsed on read by its format version, and one row of
 * counters that the session objects add to after each export.
 */

const Row = z.object({
  format: z.literal(1),
  endpoint: z.string(),
  headers: z.string().transform((text) => SecretHeaders.parse(JSON.parse(text))),
  sample_ratio: z.number().min(0).max(1),
  capture_content: z.union([z.literal(0), z.literal(1)]).transform((v) => v === 1),
  updated_at: z.string(),
});

const SELECT = "SELECT format, endpoint, headers, sample_ratio, capture_content, updated_at FROM telemetry_config";

/** The tenant's settings, or null when it has set none (nothing is exported to it). */
export async function getTelemetryConfig(db: D1Database, tenant: string): Promise<TelemetryConfig | null> {
  return parseTelemetryConfig(await telemetryConfigStatement(db, tenant).first<unknown>());
}

/** The statement the registry head's batch reads the settings with (src/services/registry-cache.ts). */
export function telemetryConfigStatement(db: D1Database, tenant: string): D1PreparedStatement {
  return db.prepare(`${SELECT} WHERE tenant = ?1`).bind(tenant);
}

/** A settings row as read (null: none). */
export function parseTelemetryConfig(row: unknown): TelemetryConfig | null {
  if (!row) return null;
  const { format: _format, ...config } = Row.parse(row);
  return config;
}

/** Replaces the tenant's settings. */
export async function putTelemetryConfig(
  db: D1Database,
  tenant: string,
  input: TelemetryConfigInput,
): Promise<TelemetryConfig> {
  const config: TelemetryConfig = { ...input, updated_at: new Date().toISOString() };
  await db
    .prepare(
      `INSERT INTO telemetry_config (tenant, format, endpoint, headers, sample_ratio, capture_content, updated_at)
       VALUES (?1, 1, ?2, ?3, ?4, ?5, ?6)
       ON CONFLICT (tenant) DO UPDATE SET format = 1, endpoint = excluded.endpoint, headers = excluded.headers,
         sample_ratio = excluded.sample_ratio, capture_content = excluded.capture_content, updated_at = excluded.updated_at`,
    )
    .bind(
      tenant,
      config.endpoint,
      JSON.stringify(config.headers),
      config.sample_ratio,
      config.capture_content ? 1 : 0,
      config.updated_at,
    )
    .run();
  return config;
}

/** Removes the tenant's settings (its counters stay). True when there were some. */
export async function deleteTelemetryConfig(db: D1Database, tenant: string): Promise<boolean> {
  const result = await db.prepare("DELETE FROM telemetry_config WHERE tenant = ?1").bind(tenant).run();
  return result.meta.changes > 0;
}

const NO_STATS: TelemetryStats = { exported_spans: 0, dropped_spans: 0, last_error: null, last_error_at: null };

/** The tenant's export counters (zero before its first export). */
export async function getTelemetryStats(db: D1Database, tenant: string): Promise<TelemetryStats> {
  const row = await db
    .prepare("SELECT exported_spans, dropped_spans, last_error, last_error_at FROM telemetry_stats WHERE tenant = ?1")
    .bind(tenant)
    .first<TelemetryStats>();
  return row ?? NO_STATS;
}

/** What one export run adds to the counters; `error` (with its time) when an export failed. */
export interface StatsDelta {
  exported: number;
  dropped: number;
  error?: { message: string; at: string } | undefined;
}

/** Adds to the tenant's counters in one statement (a row is made on first use). */
export async function addTelemetryStats(db: D1Database, tenant: string, delta: StatsDelta): Promise<void> {
  await db
    .prepare(
      `INSERT INTO telemetry_stats (tenant, exported_spans, dropped_spans, last_error, last_error_at)
       VALUES (?1, ?2, ?3, ?4, ?5)
       ON CONFLICT (tenant) DO UPDATE SET
         exported_spans = exported_spans + excluded.exported_spans,
         dropped_spans = dropped_spans + excluded.dropped_spans,
         last_error = COALESCE(excluded.last_error, last_error),
         last_error_at = COALESCE(excluded.last_error_at, last_error_at)`,
    )
    .bind(tenant, delta.exported, delta.dropped, delta.error?.message ?? null, delta.error?.at ?? null)
    .run();
}
