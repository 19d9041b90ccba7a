import { describe, expect, it } from "vitest";
import { anyValue, exportTraceRequest, otlpSpan } from "../../src/telemetry/otlp-json";
import type { Span } from "../../src/telemetry/span";
import { isoToNanos, msToNanos } from "../../src/telemetry/span";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

const chat: Span = {
  trace_id: TRACE,
  span_id: "00f067aa0ba902b7",
  parent_span_id: "b7ad6b7169203331",
  name: "chat gpt-4o",
  kind: "client",
  start_ns: "1795860000000000000",
  end_ns: "1795860000800000000",
  attributes: {
    "gen_ai.operation.name": "chat",
    "gen_ai.usage.input_tokens": 310,
    "gen_ai.request.stream": true,
    "relay.route.confidence": { double: 1 },
    "gen_ai.response.finish_reasons": ["stop"],
    ratio: 0.5,
  },
  events: [
    { name: "relay.approval.requested", time_ns: "1795860000100000000", attributes: { "gen_ai.tool.name": "x" } },
  ],
  links: [{ trace_id: TRACE, span_id: "b9c7c989f97918e1", attributes: {} }],
  status: { code: "error", message: "timeout" },
};

describe("OTLP/HTTP JSON", () => {
  it("encodes a span in OTLP's JSON mapping: hex ids, string nanos, integer enums, typed values", () => {
    expect(otlpSpan(chat)).toEqual({
      traceId: TRACE,
      spanId: "00f067aa0ba902b7",
      parentSpanId: "b7ad6b7169203331",
      name: "chat gpt-4o",
      kind: 3,
      startTimeUnixNano: "1795860000000000000",
      endTimeUnixNano: "1795860000800000000",
      attributes: [
        { key: "gen_ai.operation.name", value: { stringValue: "chat" } },
        { key: "gen_ai.request.stream", value: { boolValue: true } },
        { key: "gen_ai.response.finish_reasons", value: { arrayValue: { values: [{ stringValue: "stop" }] } } },
        { key: "gen_ai.usage.input_tokens", value: { intValue: "310" } },
        { key: "ratio", value: { doubleValue: 0.5 } },
        { key: "relay.route.confidence", value: { doubleValue: 1 } },
      ],
      events: [
        {
          timeUnixNano: "1795860000100000000",
          name: "relay.approval.requested",
          attributes: [{ key: "gen_ai.tool.name", value: { stringValue: "x" } }],
        },
      ],
      links: [{ traceId: TRACE, spanId: "b9c7c989f97918e1", attributes: [] }],
      status: { code: 2, message: "timeout" },
    });
  });

  it("leaves out a root's parent and an unset status's message", () => {
    const root = otlpSpan({ ...chat, parent_span_id: null, kind: "internal", status: { code: "unset" } });
    expect(root).not.toHaveProperty("parentSpanId");
    expect(root.kind).toBe(1);
    expect(root.status).toEqual({ code: 0 });
    expect(otlpSpan({ ...chat, kind: "server", status: { code: "ok" } })).toMatchObject({
      kind: 2,
      status: { code: 1 },
    });
  });

  it("wraps spans in resourceSpans and scopeSpans with the service and tenant as resource attributes", () => {
    const body = exportTraceRequest([chat], { tenant: "acme", service_version: "0.1.0" });
    expect(body.resourceSpans).toHaveLength(1);
    expect(body.resourceSpans[0]!.resource.attributes).toEqual([
      { key: "relay.tenant", value: { stringValue: "acme" } },
      { key: "service.name", value: { stringValue: "relay" } },
      { key: "service.version", value: { stringValue: "0.1.0" } },
    ]);
    expect(body.resourceSpans[0]!.scopeSpans).toEqual([{ scope: { name: "relay" }, spans: [otlpSpan(chat)] }]);
    // Plain JSON: what is sent is what was built.
    expect(JSON.parse(JSON.stringify(body))).toEqual(body);
  });

  it("keeps nanosecond times exact past 2^53 and integer attributes as strings", () => {
    expect(isoToNanos("2026-11-28T10:00:00.123Z")).toBe("1795860000123000000");
    expect(msToNanos(0)).toBe("0");
    expect(() => msToNanos(Number.NaN)).toThrow(RangeError);
    expect(anyValue(Number.MAX_SAFE_INTEGER)).toEqual({ intValue: "9007199254740991" });
    expect(anyValue([1, 2.5])).toEqual({ arrayValue: { values: [{ intValue: "1" }, { doubleValue: 2.5 }] } });
  });
});
