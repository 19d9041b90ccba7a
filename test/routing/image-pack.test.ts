import { describe, expect, it } from "vitest";
import { packValue, unpackValue } from "../../src/routing/image-pack";

describe("packValue / unpackValue", () => {
  it("gives back the value: nested objects and arrays, strings, numbers, typed arrays of every kind", () => {
    const value = {
      name: "shard",
      flags: [true, false, null],
      names: ["a", "b", "ünï", ""],
      nested: [{ ints: Int32Array.of(-5, 0, 70_000), floats: Float32Array.of(0.5, -1.25) }, 3],
      u8: Uint8Array.of(1, 2, 3),
      i8: Int8Array.of(-1, 1),
      u16: Uint16Array.of(65535),
      i16: Int16Array.of(-32768),
      u32: Uint32Array.of(4_000_000_000, 1),
      f64: Float64Array.of(Math.PI, -0.5, 2 ** 60),
      empty: new Float32Array(0),
    };
    expect(unpackValue(packValue(value))).toEqual(value);
  });

  it("keeps NaN and ±Infinity, and drops undefined properties as Workers RPC does", () => {
    const back = unpackValue<Record<string, unknown>>(
      packValue({ a: Number.NaN, b: [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY], c: undefined, d: 1 }),
    );
    expect(back).toEqual({ a: Number.NaN, b: [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY], d: 1 });
    expect("c" in back).toBe(false);
  });

  it("sends integer arrays narrow when their values allow, and widens them back to their own type", () => {
    const small = Int32Array.from({ length: 1000 }, (_, i) => i % 200);
    const wide = Int32Array.from({ length: 1000 }, (_, i) => i * 100_000);
    expect(packValue({ small }).byteLength).toBeLessThan(packValue({ wide }).byteLength / 3);
    const back = unpackValue<{ small: Int32Array }>(packValue({ small })).small;
    expect(back).toBeInstanceOf(Int32Array);
    expect(back).toEqual(small);
  });

  it("copies arrays out, so nothing unpacked keeps the buffer alive; reads a buffer at any offset", () => {
    const f64 = Float64Array.from({ length: 100 }, (_, i) => i / 3);
    const bytes = Uint8Array.from({ length: 100 }, (_, i) => i);
    const packed = packValue({ f64, bytes });
    const back = unpackValue<{ f64: Float64Array; bytes: Uint8Array }>(packed);
    expect(back.f64).toEqual(f64);
    expect(back.bytes).toEqual(bytes);
    expect(back.f64.buffer).not.toBe(packed.buffer);
    expect(back.bytes.buffer.byteLength).toBe(bytes.byteLength);
    const shifted = new Uint8Array(packed.byteLength + 3);
    shifted.set(packed, 3);
    expect(unpackValue<{ f64: Float64Array }>(shifted.subarray(3)).f64).toEqual(f64);
  });
});
