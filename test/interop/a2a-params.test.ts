import { describe, expect, it } from "vitest";
import { MAX_MESSAGE_ID, paramsError } from "../../src/interop/a2a-params";

/** Params the spec refuses and the SDK would take (docs/a2a.md, Errors). */

describe("paramsError", () => {
  it("takes what the spec allows", () => {
    expect(paramsError("GetTask", { id: "t", historyLength: 0 })).toBeNull();
    expect(
      paramsError("ListTasks", { status: "TASK_STATE_WORKING", statusTimestampAfter: "2026-11-29T00:00:00Z" }),
    ).toBeNull();
    expect(paramsError("ListTasks", { status: "UNRECOGNIZED" })).toBeNull();
    expect(paramsError("SendMessage", { message: { messageId: "m1", parts: [] } })).toBeNull();
    expect(paramsError("CancelTask", { whatever: -1 })).toBeNull();
  });

  it("names the field the spec refuses", () => {
    expect(paramsError("GetTask", { historyLength: -3 })).toMatch(/^historyLength/);
    expect(paramsError("GetTask", { historyLength: 1.5 })).toMatch(/^historyLength/);
    expect(paramsError("ListTasks", { status: "TASK_STATE_BOGUS" })).toMatch(/^status must be a task state/);
    expect(paramsError("ListTasks", { status: 3 })).toMatch(/^status/);
    expect(paramsError("ListTasks", { statusTimestampAfter: "not-a-date" })).toMatch(/^statusTimestampAfter/);
    // What JavaScript's Date.parse takes but RFC 3339 does not: a bare year, a date alone, no zone.
    for (const loose of ["-1", "2026", "2026-11-29", "2026-11-29T10:00:00", "2026-11-29 10:00:00Z"])
      expect(paramsError("ListTasks", { statusTimestampAfter: loose }), loose).toMatch(/^statusTimestampAfter/);
    for (const exact of ["2026-11-29T10:00:00Z", "2026-11-29T10:00:00.123456789+02:00"])
      expect(paramsError("ListTasks", { statusTimestampAfter: exact }), exact).toBeNull();
    expect(paramsError("SendStreamingMessage", { message: { parts: [] } })).toMatch(/messageId/);
    expect(paramsError("SendMessage", { message: { messageId: " " } })).toMatch(/messageId/);
    expect(paramsError("SendMessage", { message: { messageId: "m".repeat(MAX_MESSAGE_ID) } })).toBeNull();
    expect(paramsError("SendMessage", { message: { messageId: "m".repeat(MAX_MESSAGE_ID + 1) } })).toMatch(
      /^message\.messageId must be at most 256/,
    );
    expect(paramsError("SendMessage", { message: { messageId: "m" }, configuration: { historyLength: -1 } })).toMatch(
      /^historyLength/,
    );
  });
});
