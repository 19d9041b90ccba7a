import { describe, expect, it } from "vitest";
import { canonical, requestFingerprint } from "../../src/handoff/fingerprint";
import { HandoffRequest } from "../../src/schemas/handoff";

const request = (body: Record<string, unknown>) =>
  HandoffRequest.parse({ session_id: "ses_x", source_agent: "triage", target_agent: "billing", reason: "r", ...body });

describe("request fingerprint", () => {
  it("ignores key order, at every depth, and undefined fields", () => {
    expect(canonical({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: undefined } })).toBe(
      '{"a":{"d":[2,{"e":0,"f":1}]},"b":1}',
    );
  });

  it("is the same for the same request and differs for another", async () => {
    const one = await requestFingerprint(request({ context: { x: 1, y: 2 } }));
    expect(await requestFingerprint(request({ context: { y: 2, x: 1 } }))).toBe(one);
    expect(await requestFingerprint(request({ context: { x: 1, y: 3 } }))).not.toBe(one);
    expect(one).toMatch(/^[0-9a-f]{64}$/);
  });
});
