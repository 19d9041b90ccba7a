import type { SpanId, TraceId } from "./trace-context";

/**
 * Span and trace ids derived from what Relay already stores (docs/observability.md, Ids).
 * A run's spans are made again from its trace events whenever they are exported, so each
 * span's id is a function of the event it comes from: exported twice, a span keeps its id,
 * and a child made before its parent closed still names it. FNV-1a over UTF-8; these ids
 * identify, they protect nothing.
 */

const encoder = new TextEncoder();

/**
 * 64-bit FNV-1a in four 16-bit limbs (low first), so every step is small-integer arithmetic:
 * the BigInt form allocated at every byte and cost more than the spans it named. Multiplying
 * by the FNV prime 2^40 + 0x1b3 is a multiply by 0x1b3 plus the value shifted left 40 bits.
 */
function fnv1a64(text: string, seed: number): string {
  let h0 = 0x2325 ^ seed;
  let h1 = 0x8422;
  let h2 = 0x9ce4;
  let h3 = 0xcbf2;
  for (const byte of encoder.encode(text)) {
    h0 ^= byte;
    const t0 = h0 * 0x1b3;
    const t1 = h1 * 0x1b3 + (t0 >>> 16);
    const t2 = h2 * 0x1b3 + (h0 << 8) + (t1 >>> 16);
    const t3 = h3 * 0x1b3 + (h1 << 8) + (t2 >>> 16);
    h0 = t0 & 0xffff;
    h1 = t1 & 0xffff;
    h2 = t2 & 0xffff;
    h3 = t3 & 0xffff;
  }
  return [h3, h2, h1, h0].map((limb) => limb.toString(16).padStart(4, "0")).join("");
}

/** A span id for `parts` (never all zero). */
export function derivedSpanId(...parts: string[]): SpanId {
  const id = fnv1a64(parts.join("\u0000"), 0);
  return id === "0".repeat(16) ? "0000000000000001" : id;
}

/** A trace id for `parts` (never all zero): two halves with different seeds. */
export function derivedTraceId(...parts: string[]): TraceId {
  const text = parts.join("\u0000");
  const id = fnv1a64(text, 1) + fnv1a64(text, 2);
  return id === "0".repeat(32) ? `${"0".repeat(31)}1` : id;
}
