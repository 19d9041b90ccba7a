import { describe, expect, it } from "vitest";
import { orAfter } from "../../src/lib/deadline";

/** A bounded wait on work the caller does not own (src/lib/deadline.ts). */
describe("orAfter", () => {
  it("answers with the work when it settles first", async () => {
    expect(await orAfter(Promise.resolve("done"), 60_000, () => "late")).toBe("done");
  });

  it("answers with the late value when the work never settles, and leaves the work as it was", async () => {
    let settled = false;
    const never = new Promise<string>(() => {}).finally(() => {
      settled = true;
    });
    expect(await orAfter(never, 1, () => "late")).toBe("late");
    expect(settled).toBe(false);
  });

  it("passes a failure of the work on", async () => {
    await expect(orAfter(Promise.reject(new Error("broke")), 60_000, () => "late")).rejects.toThrow("broke");
  });
});
