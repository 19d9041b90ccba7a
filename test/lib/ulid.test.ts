import { describe, expect, it } from "vitest";
import { base32, ulid } from "../../src/lib/ulid";
import { ulidTime } from "./decode-ulid";

describe("ulid", () => {
  it("is 26 Crockford base32 characters carrying its millisecond time", () => {
    const id = ulid(1_700_000_000_123);
    expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(ulidTime(id)).toBe(1_700_000_000_123);
  });

  it("sorts in creation order, also within one millisecond", () => {
    const ids = Array.from({ length: 500 }, () => ulid(1_700_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("never goes backwards when the clock does", () => {
    const later = ulid(1_800_000_000_000);
    const earlier = ulid(1_799_999_999_000);
    expect(earlier > later).toBe(true);
  });
});

describe("base32", () => {
  it("encodes 5 bits a character and pads the last one", () => {
    expect(base32(new Uint8Array([0xff]))).toBe("ZW");
    expect(base32(new Uint8Array(10))).toBe("0".repeat(16));
    expect(base32(new Uint8Array(16))).toHaveLength(26);
  });
});
