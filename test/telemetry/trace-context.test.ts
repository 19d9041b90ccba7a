import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  childContext,
  formatTraceparent,
  formatTracestate,
  isSpanId,
  isTraceId,
  newSpanId,
  newTraceId,
  parseTraceContext,
  parseTraceparent,
  parseTracestate,
  rootContext,
  setTraceState,
} from "../../src/telemetry/trace-context";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";

const hex = (length: number) =>
  fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: length, maxLength: length });
const traceId = hex(32).filter((s) => s !== "0".repeat(32));
const spanId = hex(16).filter((s) => s !== "0".repeat(16));
const keyChar = fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789_-*/");
const stateKey = fc.tuple(
  fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz"),
  fc.string({ unit: keyChar, maxLength: 20 }),
);
const valueChar = fc.integer({ min: 0x20, max: 0x7e }).filter((c) => c !== 0x2c && c !== 0x3d);
const stateValue = fc
  .array(valueChar, { minLength: 1, maxLength: 40 })
  .map((codes) => String.fromCharCode(...codes))
  .filter((v) => !v.endsWith(" ") && !v.startsWith(" "));

describe("traceparent", () => {
  it("reads the specification's examples", () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({ trace_id: TRACE, span_id: SPAN, sampled: true });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`)).toEqual({ trace_id: TRACE, span_id: SPAN, sampled: false });
    // Only the sampled bit is read; the reserved bits do not make it invalid.
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-fe`)?.sampled).toBe(false);
    expect(parseTraceparent(`  00-${TRACE}-${SPAN}-01\t`)?.trace_id).toBe(TRACE);
  });

  it.each([
    ["all-zero trace id", `00-${"0".repeat(32)}-${SPAN}-01`],
    ["all-zero parent id", `00-${TRACE}-${"0".repeat(16)}-01`],
    ["uppercase hex", `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ["a non-hex trace id", `00-${TRACE.slice(0, 31)}g-${SPAN}-01`],
    ["a non-hex flag", `00-${TRACE}-${SPAN}-0x`],
    ["a short trace id", `00-${TRACE.slice(1)}-${SPAN}-01`],
    ["a long parent id", `00-${TRACE}-${SPAN}0-01`],
    ["a one-digit flag", `00-${TRACE}-${SPAN}-1`],
    ["version ff", `ff-${TRACE}-${SPAN}-01`],
    ["a non-hex version", `0x-${TRACE}-${SPAN}-01`],
    ["version 00 with more fields", `00-${TRACE}-${SPAN}-01-extra`],
    ["a wrong separator", `00_${TRACE}-${SPAN}-01`],
    ["an empty header", ""],
    ["a future version too short", `cc-${TRACE}-${SPAN}-0`],
    ["a future version with a bad separator after the flags", `cc-${TRACE}-${SPAN}-01.extra`],
  ])("refuses %s", (_, header) => {
    expect(parseTraceparent(header)).toBeNull();
  });

  it("reads a higher version's known fields and answers as version 00", () => {
    const parsed = parseTraceparent(`cc-${TRACE}-${SPAN}-01-what-the-future-will-be-like`);
    expect(parsed).toEqual({ trace_id: TRACE, span_id: SPAN, sampled: true });
    expect(formatTraceparent(parsed!)).toBe(`00-${TRACE}-${SPAN}-01`);
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-00`)).toEqual({ trace_id: TRACE, span_id: SPAN, sampled: false });
  });

  it("round-trips every valid context", () => {
    fc.assert(
      fc.property(traceId, spanId, fc.boolean(), (trace_id, span_id, sampled) => {
        const header = formatTraceparent({ trace_id, span_id, sampled });
        expect(header).toHaveLength(55);
        expect(parseTraceparent(header)).toEqual({ trace_id, span_id, sampled });
      }),
    );
  });

  it("never accepts a header that changes one character of a valid one into a non-hex one", () => {
    fc.assert(
      fc.property(traceId, spanId, fc.integer({ min: 0, max: 54 }), (trace_id, span_id, at) => {
        const header = formatTraceparent({ trace_id, span_id, sampled: true });
        const broken = `${header.slice(0, at)}G${header.slice(at + 1)}`;
        expect(parseTraceparent(broken)).toBeNull();
      }),
    );
  });
});

describe("tracestate", () => {
  it("reads members in order, with whitespace around them and empty members", () => {
    expect(parseTracestate("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")).toEqual([
      { key: "rojo", value: "00f067aa0ba902b7" },
      { key: "congo", value: "t61rcWkgMzE" },
    ]);
    expect(parseTracestate("foo=1 \t , \t bar=2,, ,\tbaz=3")).toEqual([
      { key: "foo", value: "1" },
      { key: "bar", value: "2" },
      { key: "baz", value: "3" },
    ]);
    expect(parseTracestate("tenant@vendor=x, a-1_*/b=y")).toEqual([
      { key: "tenant@vendor", value: "x" },
      { key: "a-1_*/b", value: "y" },
    ]);
    expect(parseTracestate("")).toEqual([]);
    expect(parseTracestate(null)).toEqual([]);
  });

  it("accepts 32 members and the longest keys, and drops the whole header past them", () => {
    const members = Array.from({ length: 32 }, (_, i) => `k${i}=v${i}`);
    expect(parseTracestate(members.join(","))).toHaveLength(32);
    expect(parseTracestate([...members, "k32=v32"].join(","))).toBeNull();
    expect(parseTracestate(`foo=1,${"z".repeat(256)}=1`)).toHaveLength(2);
    expect(parseTracestate(`foo=1,${"z".repeat(257)}=1`)).toBeNull();
    expect(parseTracestate(`foo=1,${"t".repeat(241)}@${"v".repeat(14)}=1`)).toHaveLength(2);
    expect(parseTracestate(`foo=1,${"t".repeat(242)}@v=1`)).toBeNull();
    expect(parseTracestate(`foo=1,t@${"v".repeat(15)}=1`)).toBeNull();
    expect(parseTracestate(`foo=${"v".repeat(256)}`)).toHaveLength(1);
    expect(parseTracestate(`foo=${"v".repeat(257)}`)).toBeNull();
  });

  it.each([
    ["an uppercase key", "FOO=1"],
    ["a key with a dot", "foo.bar=1"],
    ["a space inside the key", "foo =1"],
    ["an empty tenant", "@foo=1,bar=2"],
    ["an empty vendor", "foo@=1,bar=2"],
    ["two at signs", "foo@bar@baz=1"],
    ["a duplicated key", "foo=1,foo=2"],
    ["a member with no equals sign", "foo,bar=2"],
    ["an empty value", "foo="],
    ["a tab in the value", "foo=a\tb"],
    ["a non-ASCII value", "foo=é"],
    ["an equals sign in the value", "foo=a=b"],
  ])("drops the whole header for %s", (_, header) => {
    expect(parseTracestate(header)).toBeNull();
  });

  it("round-trips valid lists", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(stateKey, stateValue), { maxLength: 32, selector: ([[a, b]]) => a + b }),
        (pairs) => {
          const entries = pairs.map(([[first, rest], value]) => ({ key: first + rest, value }));
          const header = formatTracestate(entries, Number.POSITIVE_INFINITY);
          expect(parseTracestate(header)).toEqual(entries);
        },
      ),
    );
  });

  it("truncates whole members past the length limit: long ones first, then from the right", () => {
    const long = { key: "big", value: "x".repeat(200) };
    const small = Array.from({ length: 40 }, (_, i) => ({ key: `k${i}`, value: "0123456789" }));
    const header = formatTracestate([small[0]!, long, ...small.slice(1, 31)])!;
    expect(header.length).toBeLessThanOrEqual(512);
    expect(header).not.toContain("big=");
    expect(header.startsWith("k0=0123456789,k1=")).toBe(true);
    expect(formatTracestate([])).toBeNull();
    expect(formatTracestate([long], 100)).toBeNull();
  });

  it("sets a vendor's entry on the left and keeps the others in order", () => {
    const entries = parseTracestate("congo=a,rojo=b")!;
    expect(setTraceState(entries, "rojo", "c")).toEqual([
      { key: "rojo", value: "c" },
      { key: "congo", value: "a" },
    ]);
    expect(setTraceState(entries, "Relay", "c")).toBeNull();
    const full = Array.from({ length: 32 }, (_, i) => ({ key: `k${i}`, value: "v" }));
    const next = setTraceState(full, "relay", "x")!;
    expect(next).toHaveLength(32);
    expect(next[0]).toEqual({ key: "relay", value: "x" });
    expect(next.at(-1)?.key).toBe("k30");
  });
});

describe("contexts and ids", () => {
  it("reads both headers, and no tracestate without a valid traceparent", () => {
    const headers = new Headers({ traceparent: `00-${TRACE}-${SPAN}-01`, tracestate: "congo=t61rcWkgMzE" });
    expect(parseTraceContext(headers)).toEqual({
      trace_id: TRACE,
      span_id: SPAN,
      sampled: true,
      tracestate: [{ key: "congo", value: "t61rcWkgMzE" }],
    });
    headers.set("tracestate", "BAD=1");
    expect(parseTraceContext(headers)?.tracestate).toEqual([]);
    expect(parseTraceContext(new Headers({ tracestate: "congo=x" }))).toBeNull();
    expect(parseTraceContext(new Headers({ traceparent: `00-${TRACE}-${"0".repeat(16)}-01` }))).toBeNull();
  });

  it("makes valid, distinct ids", () => {
    const traces = new Set(Array.from({ length: 200 }, newTraceId));
    const spans = new Set(Array.from({ length: 200 }, newSpanId));
    expect(traces.size).toBe(200);
    expect(spans.size).toBe(200);
    for (const id of traces) expect(isTraceId(id)).toBe(true);
    for (const id of spans) expect(isSpanId(id)).toBe(true);
  });

  it("continues a parent's trace with a new span, its flag and its state", () => {
    const parent = { ...rootContext(false), tracestate: [{ key: "congo", value: "a" }] };
    const child = childContext(parent);
    expect(child.trace_id).toBe(parent.trace_id);
    expect(child.span_id).not.toBe(parent.span_id);
    expect(child.sampled).toBe(false);
    expect(child.tracestate).toEqual(parent.tracestate);
    expect(parseTraceparent(formatTraceparent(child))).toEqual({
      trace_id: child.trace_id,
      span_id: child.span_id,
      sampled: false,
    });
  });
});
