import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor, listPage, readAfter } from "../../src/api/cursor";
import {
  AgentPosition,
  AuditRecordPosition,
  InboxPosition,
  SequencePosition,
  SessionPosition,
  sessionInboxPosition,
  sessionRunPosition,
  ToolPosition,
} from "../../src/api/positions";
import { RelayError } from "../../src/errors";
import { escalationInboxId, newInboxId } from "../../src/runtime/inbox";
import { newRunId } from "../../src/runtime/run-record";
import { newSessionId } from "../../src/sessions/ids";

/** The error code a call throws, or "ok". */
function codeOf(fn: () => unknown): string {
  try {
    fn();
    return "ok";
  } catch (error) {
    return error instanceof RelayError ? error.code : String(error);
  }
}

describe("decodeCursor", () => {
  it("takes back what listPage hands out, for each list's position", () => {
    const session = newSessionId();
    const positions: [Parameters<typeof decodeCursor>[1], string | number][] = [
      [AgentPosition, "billing-2"],
      [ToolPosition, "Lookup_Order"],
      [AuditRecordPosition, "01JD3ZQ8K9W5X2Y7T4R6P1M0NB"],
      [SessionPosition, session],
      [InboxPosition, newInboxId(session, Date.now())],
      [InboxPosition, escalationInboxId("cmsg_01jd3zq8k9w5x2y7t4r6p1m0nb", "col_01jd3zq8k9w5x2y7t4r6p1m0nc")],
      [sessionInboxPosition(session), newInboxId(session, Date.now())],
      [SequencePosition, 0],
      [SequencePosition, 123_456],
    ];
    for (const [position, value] of positions) {
      const cursor = listPage([], value).next_cursor!;
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodeCursor(cursor, position)).toBe(value);
    }
    expect(decodeCursor(undefined, AgentPosition)).toBeUndefined();
  });

  it("refuses other spellings of a position: padding, whitespace, the standard alphabet, spare bits set", () => {
    // "ab?" encodes with a '/' in base64 ("YWI/"), so its base64url spelling has an '_'.
    expect(encodeCursor("ab?")).toBe("YWI_");
    expect(encodeCursor("12")).toBe("MTI");
    for (const spelling of ["YWI/", "MTI=", "MT I", " MTI", "MTJ", "MTK", "MTL"]) {
      expect(atob(spelling.replace(/_/g, "/")), spelling).toMatch(/^(ab\?|12)$/);
      expect(
        codeOf(() => decodeCursor(spelling, SequencePosition)),
        spelling,
      ).toBe("INVALID_CURSOR");
    }
    expect(decodeCursor("MTI", SequencePosition)).toBe(12);
  });

  it("refuses a position outside the list's grammar, and garbage", () => {
    const session = newSessionId();
    const cases: [Parameters<typeof decodeCursor>[1], string][] = [
      [AgentPosition, "Billing"],
      [AgentPosition, "billing\u0000"],
      [ToolPosition, "look up"],
      [AuditRecordPosition, "01jd3zq8k9w5x2y7t4r6p1m0nb"],
      [AuditRecordPosition, "81JD3ZQ8K9W5X2Y7T4R6P1M0NB"],
      [AuditRecordPosition, "01JD3ZQ8K9W5X2Y7T4R6P1M0NU"],
      [SessionPosition, `${session}x`],
      [InboxPosition, `inb_${"0".repeat(26)}_${session.toUpperCase()}`],
      [sessionInboxPosition(session), newInboxId(newSessionId(), Date.now())],
      [SequencePosition, "-1"],
      [SequencePosition, "01"],
      [SequencePosition, "1e3"],
      [SequencePosition, "1".repeat(16)],
      [SequencePosition, ""],
    ];
    for (const [position, text] of cases) {
      expect(
        codeOf(() => decodeCursor(encodeCursor(text), position)),
        JSON.stringify(text),
      ).toBe("INVALID_CURSOR");
    }
    for (const garbage of ["", "fg", "!!!", "\u0000", "a", "A".repeat(401), "MTI\u0000"]) {
      expect(
        codeOf(() => decodeCursor(garbage, SequencePosition)),
        JSON.stringify(garbage),
      ).toBe("INVALID_CURSOR");
    }
  });
});

describe("readAfter", () => {
  it("takes a position as the store writes it, and names the grammar when it refuses one", () => {
    expect(readAfter("7", SequencePosition)).toBe(7);
    const session = newSessionId();
    const run = newRunId(session, Date.now());
    expect(readAfter(run, sessionRunPosition(session))).toBe(run);
    expect(codeOf(() => readAfter(run, sessionRunPosition(newSessionId())))).toBe("INVALID_CURSOR");
    for (const bad of ["\u0000%ff", "fg", "", "07", "+7"]) {
      try {
        readAfter(bad, SequencePosition);
        expect.unreachable(bad);
      } catch (error) {
        expect((error as RelayError).code).toBe("INVALID_CURSOR");
        expect((error as RelayError).message).toBe("`after` must be a sequence number (a message's seq).");
      }
    }
  });
});
