import { describe, expect, it } from "vitest";
import { capUtf8, routedInput } from "../../../src/routing/replay/history";
import { HISTORY_INPUT_BYTES } from "../../../src/schemas/replay";

const bytes = (text: string) => new TextEncoder().encode(text).byteLength;

describe("capUtf8", () => {
  it("keeps a text that fits as it is", () => {
    expect(capUtf8("refund please", 20)).toBe("refund please");
    expect(capUtf8("退款", 6)).toBe("退款");
  });

  it("cuts at the byte limit, never inside a character", () => {
    expect(capUtf8("abcdef", 4)).toBe("abcd");
    // 3 bytes each: 7 bytes hold two whole characters only.
    expect(capUtf8("退款退款", 7)).toBe("退款");
    // A 4-byte emoji does not fit 3 bytes at all.
    expect(capUtf8("😀x", 3)).toBe("");
  });
});

describe("routedInput", () => {
  const decision = { agent: "billing", method: "rule" as const, confidence: 91, registry_version: 4 };

  it("keeps the start of the input, the decision and the time", () => {
    const long = "é".repeat(HISTORY_INPUT_BYTES);
    const row = routedInput("ses_1", long, decision, Date.UTC(2026, 10, 29, 12));
    expect(row).toEqual({
      at: "2026-11-29T12:00:00.000Z",
      session_id: "ses_1",
      input: "é".repeat(HISTORY_INPUT_BYTES / 2),
      agent: "billing",
      method: "rule",
      confidence: 91,
      registry_version: 4,
    });
    expect(bytes(row!.input)).toBe(HISTORY_INPUT_BYTES);
  });

  it("keeps nothing of a decision that named no agent", () => {
    expect(routedInput("ses_1", "hmm", { ...decision, agent: null }, 0)).toBeNull();
  });
});
