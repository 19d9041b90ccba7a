import { describe, expect, it } from "vitest";
import { Handoff, HandoffRequest, HistoryItem, MAX_CONTENT_BYTES, StoredError } from "../../src/schemas/handoff";

const base = { session_id: "01JSESSION", source_agent: "triage", reason: "needs billing" };
const issues = (value: unknown) => {
  const parsed = HandoffRequest.safeParse(value);
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
};

describe("HandoffRequest", () => {
  it("fills defaults", () => {
    expect(HandoffRequest.parse({ ...base, target_agent: "billing" })).toEqual({
      ...base,
      target_agent: "billing",
      mode: "transfer",
      policy: "immediate",
      timeout_s: 300,
      on_timeout: "fail",
    });
  });

  it("needs exactly one of target_agent and required_capabilities for a transfer", () => {
    expect(issues(base)).toEqual([
      "target_agent: a transfer needs exactly one of target_agent and required_capabilities",
    ]);
    expect(issues({ ...base, target_agent: "billing", required_capabilities: ["refunds"] })).toHaveLength(1);
    expect(issues({ ...base, required_capabilities: ["refunds"] })).toEqual([]);
    expect(issues({ ...base, required_capabilities: [] })).not.toEqual([]);
  });

  it("lets a return name no target, and refuses capabilities on it", () => {
    expect(issues({ ...base, mode: "return" })).toEqual([]);
    expect(issues({ ...base, mode: "return", target_agent: "triage" })).toEqual([]);
    expect(issues({ ...base, mode: "return", required_capabilities: ["x"] })[0]).toMatch(
      /^required_capabilities: a return/,
    );
  });

  it("is strict and bounds its fields", () => {
    const ok = { ...base, target_agent: "billing" };
    expect(issues({ ...ok, extra: 1 })).not.toEqual([]);
    expect(issues({ ...ok, reason: "  " })).not.toEqual([]);
    expect(issues({ ...ok, reason: "x".repeat(2001) })).not.toEqual([]);
    expect(issues({ ...ok, reason: "x".repeat(2000) })).toEqual([]);
    expect(issues({ ...ok, timeout_s: 0 })).not.toEqual([]);
    expect(issues({ ...ok, timeout_s: 86_401 })).not.toEqual([]);
    expect(issues({ ...ok, timeout_s: 86_400 })).toEqual([]);
    expect(issues({ ...ok, timeout_s: 1.5 })).not.toEqual([]);
    expect(issues({ ...ok, on_timeout: "retry" })).not.toEqual([]);
    expect(issues({ ...ok, policy: "eventually" })).not.toEqual([]);
    expect(issues({ ...ok, session_id: "../etc" })).not.toEqual([]);
    expect(issues({ ...ok, target_agent: "Billing" })).not.toEqual([]);
    expect(issues({ ...ok, condition: "x".repeat(2001) })).not.toEqual([]);
    expect(issues({ ...ok, task: { task_id: "t1", task_state: { step: 2 } } })).toEqual([]);
    expect(issues({ ...ok, task: { task_id: "t1" } })).not.toEqual([]);
    expect(issues({ ...ok, context: { a: 1 }, payload: { b: [1] } })).toEqual([]);
    expect(issues({ ...ok, context: [1] })).not.toEqual([]);
  });

  it("takes at most 1000 history items", () => {
    const item = { role: "user", content: "hi" };
    expect(issues({ ...base, target_agent: "billing", conversation_history: Array(1000).fill(item) })).toEqual([]);
    expect(issues({ ...base, target_agent: "billing", conversation_history: Array(1001).fill(item) })).not.toEqual([]);
  });
});

describe("HistoryItem", () => {
  it("accepts the conversation item shape and refuses unknown roles and fields", () => {
    expect(HistoryItem.safeParse({ role: "tool", content: "", type: "tool_output", tool_name: "lookup" }).success).toBe(
      true,
    );
    expect(HistoryItem.safeParse({ role: "agent", content: "x" }).success).toBe(false);
    expect(HistoryItem.safeParse({ role: "user", content: "x", mood: "happy" }).success).toBe(false);
  });

  it("counts content in UTF-8 bytes", () => {
    expect(HistoryItem.safeParse({ role: "user", content: "a".repeat(MAX_CONTENT_BYTES) }).success).toBe(true);
    expect(HistoryItem.safeParse({ role: "user", content: "a".repeat(MAX_CONTENT_BYTES + 1) }).success).toBe(false);
    // 3 bytes each in UTF-8: within the character count, over the byte count.
    expect(HistoryItem.safeParse({ role: "user", content: "€".repeat(MAX_CONTENT_BYTES / 2) }).success).toBe(false);
  });
});

describe("Handoff record", () => {
  it("round-trips a stored handoff", () => {
    const record = {
      id: "01JHANDOFF",
      session_id: "01JSESSION",
      status: "failed",
      mode: "transfer",
      policy: "immediate",
      source: "triage",
      target: null,
      request: HandoffRequest.parse({ ...base, required_capabilities: ["refunds"] }),
      context: null,
      error: { code: "CAPABILITY_MISMATCH", message: "none", details: { candidates: [] } },
      created_at: "2026-01-01T00:00:00.000Z",
      updated_at: "2026-01-01T00:00:00.001Z",
      transitions: [
        { from: null, to: "initiated", at: "2026-01-01T00:00:00.000Z" },
        { from: "initiated", to: "validating", at: "2026-01-01T00:00:00.000Z" },
        { from: "validating", to: "failed", at: "2026-01-01T00:00:00.001Z", reason: "CAPABILITY_MISMATCH" },
      ],
    };
    expect(Handoff.parse(JSON.parse(JSON.stringify(record)))).toEqual(record);
    expect(StoredError.safeParse({ code: "NOT_A_CODE", message: "x" }).success).toBe(false);
  });
});
