/**
 * W3C Trace Context (docs/observability.md, Trace context): the `traceparent` and
 * `tracestate` headers, parsed and formatted, and the ids of new traces and spans.
 *
 * Parsing follows the Recommendation's rules for version 00 and for higher versions (read
 * the three known fields, ignore the rest, answer as version 00); formatting always writes
 * version 00. A `tracestate` is only read beside a valid `traceparent`, and a `tracestate`
 * with any invalid list member is dropped whole, as the specification's test suite expects
 * (one bad member, a duplicated key, more than 32 members).
 */

/** 32 lowercase hex digits, not all zero. */
export type TraceId = string;
/** 16 lowercase hex digits, not all zero. */
export type SpanId = string;

/** One `tracestate` list member; the list keeps the header's order (left is newest). */
export interface TraceStateEntry {
  key: string;
  value: string;
}

/** The context a request carries: whose trace, which span is its parent, sampled or not. */
export interface TraceContext {
  trace_id: TraceId;
  /** The caller's span: the parent of the spans made for this request. */
  span_id: SpanId;
  /** Only the sampled bit (0x01) is kept: the other bits are reserved and sent as zero. */
  sampled: boolean;
  tracestate: TraceStateEntry[];
}

export const TRACEPARENT_VERSION = "00";
/** The most list members a `tracestate` may hold. */
export const MAX_TRACESTATE_MEMBERS = 32;
/** The combined length the specification asks every vendor to propagate at least. */
export const TRACESTATE_PROPAGATED_LENGTH = 512;

const HEX_2 = /^[0-9a-f]{2}$/;
const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

export const isTraceId = (id: string): id is TraceId => TRACE_ID.test(id) && id !== ZERO_TRACE;
export const isSpanId = (id: string): id is SpanId => SPAN_ID.test(id) && id !== ZERO_SPAN;

/**
 * A `traceparent` header's trace id, parent id and sampled flag, or null when the header is
 * not one to continue (the caller then starts a new trace). Surrounding whitespace, which
 * HTTP allows around a field value, is ignored.
 */
export function parseTraceparent(header: string | null | undefined): Omit<TraceContext, "tracestate"> | null {
  if (typeof header !== "string") return null;
  const value = header.trim();
  const version = value.slice(0, 2);
  if (!HEX_2.test(version) || value[2] !== "-" || version === "ff") return null;
  // Version 00 is exactly 55 characters; a higher version may add fields after a dash.
  if (
    version === TRACEPARENT_VERSION
      ? value.length !== 55
      : value.length < 55 || (value.length > 55 && value[55] !== "-")
  )
    return null;
  if (value[35] !== "-" || value[52] !== "-") return null;
  const trace_id = value.slice(3, 35);
  const span_id = value.slice(36, 52);
  const flags = value.slice(53, 55);
  if (!isTraceId(trace_id) || !isSpanId(span_id) || !HEX_2.test(flags)) return null;
  return { trace_id, span_id, sampled: (Number.parseInt(flags, 16) & 1) === 1 };
}

/** A `traceparent` header, version 00. */
export function formatTraceparent(context: Pick<TraceContext, "trace_id" | "span_id" | "sampled">): string {
  return `${TRACEPARENT_VERSION}-${context.trace_id}-${context.span_id}-${context.sampled ? "01" : "00"}`;
}

// Level 1 keys: a simple key, or tenant@system for a multi-tenant vendor.
const SIMPLE_KEY = /^[a-z][a-z0-9_\-*/]{0,255}$/;
const TENANT_KEY = /^[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13}$/;
// Up to 256 printable characters but `,` and `=`, the last not a space.
const VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

export const isTraceStateKey = (key: string): boolean => SIMPLE_KEY.test(key) || TENANT_KEY.test(key);
export const isTraceStateValue = (value: string): boolean => VALUE.test(value);

/**
 * A `tracestate` header's list members in order, or null when the header is invalid as a
 * whole (then it is not propagated). Several header fields arrive joined by commas (as
 * `Headers.get` joins them); empty and whitespace-only members are allowed and skipped.
 */
export function parseTracestate(header: string | null | undefined): TraceStateEntry[] | null {
  if (header === null || header === undefined) return [];
  const entries: TraceStateEntry[] = [];
  const seen = new Set<string>();
  for (const raw of header.split(",")) {
    const member = raw.replace(/^[ \t]+|[ \t]+$/g, "");
    if (member === "") continue;
    const eq = member.indexOf("=");
    if (eq <= 0) return null;
    const key = member.slice(0, eq);
    const value = member.slice(eq + 1);
    if (!isTraceStateKey(key) || !isTraceStateValue(value) || seen.has(key)) return null;
    seen.add(key);
    entries.push({ key, value });
    if (entries.length > MAX_TRACESTATE_MEMBERS) return null;
  }
  return entries;
}

/**
 * A `tracestate` header, or null when there is nothing to send. Past `maxLength`, whole
 * members are dropped as the specification says: those over 128 characters first, then
 * from the right.
 */
export function formatTracestate(
  entries: readonly TraceStateEntry[],
  maxLength = TRACESTATE_PROPAGATED_LENGTH,
): string | null {
  let members = entries.slice(0, MAX_TRACESTATE_MEMBERS).map((e) => `${e.key}=${e.value}`);
  const length = () => members.reduce((sum, m) => sum + m.length, 0) + Math.max(0, members.length - 1);
  if (length() > maxLength) members = members.filter((m) => m.length <= 128);
  while (members.length > 0 && length() > maxLength) members.pop();
  return members.length === 0 ? null : members.join(",");
}

/**
 * The `tracestate` with one vendor's entry set: moved to the left, the others kept in order
 * (the rightmost dropped past 32). Null when the key or value is not one the header allows.
 */
export function setTraceState(
  entries: readonly TraceStateEntry[],
  key: string,
  value: string,
): TraceStateEntry[] | null {
  if (!isTraceStateKey(key) || !isTraceStateValue(value)) return null;
  return [{ key, value }, ...entries.filter((e) => e.key !== key)].slice(0, MAX_TRACESTATE_MEMBERS);
}

/**
 * The incoming context of a request: its `traceparent` and `tracestate` headers read
 * together, or null when there is no valid `traceparent` (the `tracestate` is then not read).
 */
export function parseTraceContext(headers: { get(name: string): string | null }): TraceContext | null {
  const parent = parseTraceparent(headers.get("traceparent"));
  if (!parent) return null;
  return { ...parent, tracestate: parseTracestate(headers.get("tracestate")) ?? [] };
}

function randomHex(bytes: number): string {
  const buffer = crypto.getRandomValues(new Uint8Array(bytes));
  let out = "";
  for (const byte of buffer) out += byte.toString(16).padStart(2, "0");
  return out;
}

/** A new trace id: 16 random bytes (all zero, once in 2^128, is drawn again). */
export function newTraceId(): TraceId {
  for (;;) {
    const id = randomHex(16);
    if (id !== ZERO_TRACE) return id;
  }
}

/** A new span id: 8 random bytes, never all zero. */
export function newSpanId(): SpanId {
  for (;;) {
    const id = randomHex(8);
    if (id !== ZERO_SPAN) return id;
  }
}

/** The context of a new trace, with nothing before it. */
export function rootContext(sampled = true): TraceContext {
  return { trace_id: newTraceId(), span_id: newSpanId(), sampled, tracestate: [] };
}

/**
 * The context a span of `parent`'s trace sends on: the same trace, the flag and the state
 * carried over, a new span id (the span this process opens under the parent).
 */
export function childContext(parent: TraceContext): TraceContext {
  return {
    trace_id: parent.trace_id,
    span_id: newSpanId(),
    sampled: parent.sampled,
    tracestate: [...parent.tracestate],
  };
}
