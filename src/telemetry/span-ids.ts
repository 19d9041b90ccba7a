import type { SpanId, TraceId } from "./trace-context";

/**
 * Span and trace ids derived from what Relay already stores (docs/observability.md, Ids).
 * A run's spans are made again from its trace events whenever they are exported, so each
 * span's id is a function of the event it comes from: exported twice, a span keeps its id,
 * and a child made before its parent closed still names it. FNV-1a over UTF-8; these ids
 * identify, they protect nothing.
 */

const MASK = (1n << 64n) - 1n;
const OFFSET = 0xcbf29ce484222325n;
const PRIME = 0x100000001b3n;
const encoder = new TextEncoder();

function fnv1a64(text: string, seed: bigint): bigint {
  let hash = OFFSET ^ seed;
  for (const byte of encoder.encode(text)) hash = ((hash ^ BigInt(byte)) * PRIME) & MASK;
  return hash;
}

const hex16 = (n: bigint) => n.toString(16).padStart(16, "0");

/** A span id for `parts` (never all zero). */
export function derivedSpanId(...parts: string[]): SpanId {
  const id = hex16(fnv1a64(parts.join("\u0000"), 0n));
  return id === "0".repeat(16) ? "0000000000000001" : id;
}

/** A trace id for `parts` (never all zero): two halves with different seeds. */
export function derivedTraceId(...parts: string[]): TraceId {
  const text = parts.join("\u0000");
  const id = hex16(fnv1a64(text, 1n)) + hex16(fnv1a64(text, 2n));
  return id === "0".repeat(32) ? `${"0".repeat(31)}1` : id;
}
