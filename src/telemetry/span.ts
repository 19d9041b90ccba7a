import * as z from "zod";

/**
 * A span as plain data (docs/observability.md, Spans): what an exporter needs and nothing
 * else. Not the OpenTelemetry SDK's span, whose context follows the current async call: a
 * Relay trace crosses Durable Object calls and restarts, so its parent ids are carried in
 * data, never looked up from the call stack.
 */

const Hex32 = z.string().regex(/^(?!0{32})[0-9a-f]{32}$/);
const Hex16 = z.string().regex(/^(?!0{16})[0-9a-f]{16}$/);

/** Nanoseconds since the Unix epoch, as a decimal string (past 2^53, a number would round). */
export const UnixNanos = z.string().regex(/^(0|[1-9][0-9]{0,19})$/);
export type UnixNanos = z.infer<typeof UnixNanos>;

export const SpanKind = z.enum(["internal", "server", "client", "producer", "consumer"]);
export type SpanKind = z.infer<typeof SpanKind>;

/**
 * An attribute's value. A number that is an integer is sent as an integer; `{ double }`
 * marks a value that must stay a double whatever it is (a confidence of 1).
 */
export const AttributeValue = z.union([
  z.string(),
  z.boolean(),
  z.number().finite(),
  z.object({ double: z.number().finite() }).strict(),
  z.array(z.string()),
  z.array(z.boolean()),
  z.array(z.number().finite()),
]);
export type AttributeValue = z.infer<typeof AttributeValue>;

export const Attributes = z.record(z.string().min(1), AttributeValue);
export type Attributes = z.infer<typeof Attributes>;

export const SpanEvent = z.object({ name: z.string().min(1), time_ns: UnixNanos, attributes: Attributes });
export type SpanEvent = z.infer<typeof SpanEvent>;

export const SpanLink = z.object({ trace_id: Hex32, span_id: Hex16, attributes: Attributes });
export type SpanLink = z.infer<typeof SpanLink>;

export const SpanStatus = z.object({
  code: z.enum(["unset", "ok", "error"]),
  /** Only with `error`: a short description, never message content unless capture is on. */
  message: z.string().optional(),
});
export type SpanStatus = z.infer<typeof SpanStatus>;

export const Span = z
  .object({
    trace_id: Hex32,
    span_id: Hex16,
    /** Null for a trace's root. */
    parent_span_id: Hex16.nullable(),
    name: z.string().min(1),
    kind: SpanKind,
    start_ns: UnixNanos,
    end_ns: UnixNanos,
    attributes: Attributes,
    events: z.array(SpanEvent),
    links: z.array(SpanLink),
    status: SpanStatus,
  })
  .refine((s) => BigInt(s.end_ns) >= BigInt(s.start_ns), { message: "a span cannot end before it starts" });
export type Span = z.infer<typeof Span>;

const NS_PER_MS = 1_000_000n;

/** Milliseconds since the epoch (a whole number, as Date gives them) in nanoseconds. */
export function msToNanos(ms: number): UnixNanos {
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`not a time: ${ms}`);
  return (BigInt(Math.round(ms)) * NS_PER_MS).toString();
}

/** An ISO 8601 timestamp in nanoseconds since the epoch. */
export function isoToNanos(iso: string): UnixNanos {
  return msToNanos(Date.parse(iso));
}

/** `ns` moved back by `ms` milliseconds, never before the epoch. */
export function minusMs(ns: UnixNanos, ms: number): UnixNanos {
  const back = BigInt(ns) - BigInt(Math.round(ms)) * NS_PER_MS;
  return (back < 0n ? 0n : back).toString();
}

/** The later of two times. */
export function laterOf(a: UnixNanos, b: UnixNanos): UnixNanos {
  return BigInt(a) >= BigInt(b) ? a : b;
}
