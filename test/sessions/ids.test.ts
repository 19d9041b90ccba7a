import { describe, expect, it } from "vitest";
import { SessionId } from "../../src/schemas/session";
import { agentObjectName, isSessionId, newSessionId, sessionObjectName } from "../../src/sessions/ids";

describe("session ids", () => {
  it("are ses_ + 52 base32 characters, valid as API session ids", () => {
    const id = newSessionId();
    expect(id).toMatch(/^ses_[0-9a-z]{52}$/);
    expect(isSessionId(id)).toBe(true);
    expect(SessionId.safeParse(id).success).toBe(true);
  });

  it("sort by creation time and differ in their random part", () => {
    const a = newSessionId(Date.UTC(2026, 0, 1));
    const b = newSessionId(Date.UTC(2026, 0, 2));
    expect(a < b).toBe(true);
    const ids = new Set(Array.from({ length: 1000 }, () => newSessionId().slice(30)));
    expect(ids.size).toBe(1000);
  });

  it("refuses anything else", () => {
    for (const bad of [
      "",
      "ses_",
      "ses_ABC",
      `ses_${"0".repeat(51)}`,
      `ses_${"0".repeat(53)}`,
      `SES_${"0".repeat(52)}`,
      `ses_${"0".repeat(51)}!`,
    ]) {
      expect(isSessionId(bad), bad).toBe(false);
    }
  });

  it("name objects by tenant, so a session id means nothing under another tenant", () => {
    expect(sessionObjectName("alpha", "ses_1")).not.toBe(sessionObjectName("beta", "ses_1"));
    expect(agentObjectName("alpha", "support")).toBe("alpha:support");
  });
});
