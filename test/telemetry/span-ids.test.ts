import { describe, expect, it } from "vitest";
import { derivedSpanId, derivedTraceId } from "../../src/telemetry/span-ids";

/** FNV-1a 64 as its definition reads, in BigInt: the reference the limb arithmetic must match. */
function reference(text: string, seed: bigint): string {
  let hash = 0xcbf29ce484222325n ^ seed;
  for (const byte of new TextEncoder().encode(text))
    hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & ((1n << 64n) - 1n);
  return hash.toString(16).padStart(16, "0");
}

describe("derived ids", () => {
  it("are FNV-1a 64: the published test vectors", () => {
    expect(derivedSpanId("")).toBe("cbf29ce484222325");
    expect(derivedSpanId("a")).toBe("af63dc4c8601ec8c");
    expect(derivedSpanId("foobar")).toBe("85944171f73967e8");
  });

  it("match the BigInt definition for ids, parts and text beyond ASCII, span and trace alike", () => {
    const texts = [
      "4bf92f3577b34da6a3ce929d0e0e4736\u0000evt_01m8kdmvn6j0qar8ak9p71r4zj\u0000turn",
      "relay.run\u0000run_01m8kdmvn6j0qar8ak9p71r4ze_ses_01m8kdmvmhz6",
      "ünïcödé ✓ 𝄞",
      "\u00ff".repeat(300),
    ];
    for (let i = 0; i < 200; i++) texts.push(`evt_${i.toString(36)}_${"x".repeat(i % 17)}`);
    for (const text of texts) {
      expect(derivedSpanId(text), text).toBe(reference(text, 0n));
      expect(derivedTraceId(text), text).toBe(reference(text, 1n) + reference(text, 2n));
    }
    expect(derivedSpanId("a", "b")).toBe(reference("a\u0000b", 0n));
  });
});
