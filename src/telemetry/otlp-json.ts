import { RELAY } from "./semconv";
import type { Attributes, AttributeValue, Span } from "./span";

/**
 * Spans as an OTLP/HTTP JSON body, an `ExportTraceServiceRequest` (docs/observability.md,
 * OTLP): resourceSpans → scopeSpans → spans, in the JSON mapping OTLP specifies — field
 * names in lowerCamelCase, trace and span ids as hex (not base64), enums as integers,
 * 64-bit integers (times, integer attributes) as decimal strings. POST it with
 * `Content-Type: application/json` to a collector's `/v1/traces`.
 */

export type OtlpAnyValue =
  | { stringValue: string }
  | { boolValue: boolean }
  | { intValue: string }
  | { doubleValue: number }
  | { arrayValue: { values: OtlpAnyValue[] } };

export interface OtlpKeyValue {
  key: string;
  value: OtlpAnyValue;
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpKeyValue[];
  events: { timeUnixNano: string; name: string; attributes: OtlpKeyValue[] }[];
  links: { traceId: string; spanId: string; attributes: OtlpKeyValue[] }[];
  status: { code: number; message?: string };
}

export interface ExportTraceServiceRequest {
  resourceSpans: {
    resource: { attributes: OtlpKeyValue[] };
    scopeSpans: { scope: { name: string; version?: string }; spans: OtlpSpan[] }[];
  }[];
}

/** `Span.SpanKind` of the trace proto. */
export const OTLP_SPAN_KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;
/** `Status.StatusCode` of the trace proto. */
export const OTLP_STATUS_CODE = { unset: 0, ok: 1, error: 2 } as const;

/** The instrumentation scope Relay's spans are reported under. */
export const RELAY_SCOPE = "relay";

export interface ExportResource {
  /** The tenant whose spans these are: a resource attribute, so one request holds one tenant. */
  tenant: string;
  /** `service.name`; Relay unless the operator names its deployment otherwise. */
  service_name?: string;
  service_version?: string;
}

function scalar(value: string | number | boolean): OtlpAnyValue {
  if (typeof value === "string") return { stringValue: value };
  if (typeof value === "boolean") return { boolValue: value };
  return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
}

/** One attribute value as an OTLP AnyValue. */
export function anyValue(value: AttributeValue): OtlpAnyValue {
  if (Array.isArray(value)) return { arrayValue: { values: value.map(scalar) } };
  if (typeof value === "object") return { doubleValue: value.double };
  return scalar(value);
}

/** Attributes as OTLP key/values, in key order (the order a receiver shows them in). */
export function keyValues(attributes: Attributes): OtlpKeyValue[] {
  return Object.keys(attributes)
    .sort()
    .map((key) => ({ key, value: anyValue(attributes[key]!) }));
}

/** One span in OTLP's JSON form. */
export function otlpSpan(span: Span): OtlpSpan {
  const out: OtlpSpan = {
    traceId: span.trace_id,
    spanId: span.span_id,
    name: span.name,
    kind: OTLP_SPAN_KIND[span.kind],
    startTimeUnixNano: span.start_ns,
    endTimeUnixNano: span.end_ns,
    attributes: keyValues(span.attributes),
    events: span.events.map((e) => ({ timeUnixNano: e.time_ns, name: e.name, attributes: keyValues(e.attributes) })),
    links: span.links.map((l) => ({ traceId: l.trace_id, spanId: l.span_id, attributes: keyValues(l.attributes) })),
    status:
      span.status.message === undefined
        ? { code: OTLP_STATUS_CODE[span.status.code] }
        : { code: OTLP_STATUS_CODE[span.status.code], message: span.status.message },
  };
  if (span.parent_span_id !== null) out.parentSpanId = span.parent_span_id;
  return out;
}

/** An export request for one tenant's spans. */
export function exportTraceRequest(spans: readonly Span[], resource: ExportResource): ExportTraceServiceRequest {
  const attributes: Attributes = { "service.name": resource.service_name ?? "relay", [RELAY.tenant]: resource.tenant };
  if (resource.service_version) attributes["service.version"] = resource.service_version;
  return {
    resourceSpans: [
      {
        resource: { attributes: keyValues(attributes) },
        scopeSpans: [{ scope: { name: RELAY_SCOPE }, spans: spans.map(otlpSpan) }],
      },
    ],
  };
}
