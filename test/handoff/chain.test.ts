import { describe, expect, it } from "vitest";
import { depth, nextStack, returnTarget, topOf } from "../../src/handoff/chain";

describe("handoff chain (a stack)", () => {
  it("measures depth as handoffs made", () => {
    expect(depth([])).toBe(0);
    expect(depth(["a"])).toBe(0);
    expect(depth(["a", "b", "c"])).toBe(2);
  });

  it("knows the top and the agent a return goes back to", () => {
    expect(topOf([])).toBeNull();
    expect(topOf(["a", "b"])).toBe("b");
    expect(returnTarget(["a"])).toBeNull();
    expect(returnTarget(["a", "b", "c"])).toBe("b");
  });

  it("pushes on transfer without touching the input", () => {
    const stack = ["a"];
    expect(nextStack(stack, "transfer", "b")).toEqual({ ok: true, value: ["a", "b"] });
    expect(stack).toEqual(["a"]);
  });

  it("allows A→B then B returns to A", () => {
    const afterTransfer = nextStack(["a"], "transfer", "b");
    if (!afterTransfer.ok) throw new Error("transfer");
    expect(nextStack(afterTransfer.value, "return")).toEqual({ ok: true, value: ["a"] });
    expect(nextStack(afterTransfer.value, "return", "a")).toEqual({ ok: true, value: ["a"] });
  });

  it("calls A→B→A as transfers a cycle, and a transfer to oneself too", () => {
    expect(nextStack(["a", "b"], "transfer", "a")).toMatchObject({
      ok: false,
      error: { code: "CIRCULAR_HANDOFF", details: { chain: ["a", "b", "a"], target: "a" } },
    });
    expect(nextStack(["a", "b"], "transfer", "b")).toMatchObject({ ok: false, error: { code: "CIRCULAR_HANDOFF" } });
  });

  it("refuses a return with nobody to return to, or to the wrong agent", () => {
    expect(nextStack(["a"], "return")).toMatchObject({ ok: false, error: { code: "NOTHING_TO_RETURN" } });
    expect(nextStack([], "return")).toMatchObject({ ok: false, error: { code: "NOTHING_TO_RETURN" } });
    expect(nextStack(["a", "b", "c"], "return", "a")).toMatchObject({
      ok: false,
      error: { code: "HANDOFF_NOT_ALLOWED", details: { source: "c", target: "a", allowed_targets: ["b"] } },
    });
  });

  it("a transfer needs a target", () => {
    expect(() => nextStack(["a"], "transfer")).toThrow(TypeError);
  });
});
