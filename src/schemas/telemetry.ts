import * as z from "zod";
import { SecretHeaders } from "./vault";

/**
 * A tenant's trace export (docs/observability.md, Export): where its runs' spans go, the
 * headers sent with them (values from the tenant's vault, by name), the share of traces sent
 * and whether content is captured. `GET|PUT|DELETE /v1/config/telemetry`.
 */

/** `PUT /v1/config/telemetry`. */
export const TelemetryConfigInput = z.strictObject({
  /** The collector's OTLP/HTTP traces URL (usually ending `/v1/traces`); the outbound address policy applies. */
  endpoint: z.url({ protocol: /^https?$/ }).max(2048),
  /** Headers sent with each export, each naming the vault secret that holds its value. */
  headers: SecretHeaders.default({}),
  /** The share of runs whose spans are sent, decided from the trace id (all spans of a trace agree). */
  sample_ratio: z.number().min(0).max(1).default(1),
  /** Tool arguments, a failed tool's error text and handoff reasons in spans (off: names and numbers only). */
  capture_content: z.boolean().default(false),
});
export type TelemetryConfigInput = z.infer<typeof TelemetryConfigInput>;

/** The settings as stored. */
export const TelemetryConfig = z.strictObject({
  endpoint: z.string(),
  headers: z.record(z.string(), z.string()),
  sample_ratio: z.number(),
  capture_content: z.boolean(),
  updated_at: z.string(),
});
export type TelemetryConfig = z.infer<typeof TelemetryConfig>;

/** What the tenant's exports did, counted since its first export. */
export const TelemetryStats = z.strictObject({
  /** Spans the tenant's endpoint accepted. */
  exported_spans: z.number().int(),
  /** Spans given up: the endpoint refused them, kept failing past the retries, or its exports overflowed the queue. */
  dropped_spans: z.number().int(),
  /** Why the last export failed (null: none has). */
  last_error: z.string().nullable(),
  last_error_at: z.string().nullable(),
});
export type TelemetryStats = z.infer<typeof TelemetryStats>;

/** `GET|PUT|DELETE /v1/config/telemetry`: the settings (null: none, nothing is exported) and the counters. */
export const TelemetryView = z.strictObject({
  config: TelemetryConfig.nullable(),
  stats: TelemetryStats,
});
export type TelemetryView = z.infer<typeof TelemetryView>;
