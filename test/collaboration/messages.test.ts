import { describe, expect, it } from "vitest";
import {
  capabilityMatchOf,
  DEFAULT_QUERY_TIMEOUT_S,
  messageWaitS,
  newMessage,
  senderWait,
} from "../../src/collaboration/messages";
import { CollabMessageInput, DEFAULT_ESCALATION_TIMEOUT_S } from "../../src/schemas/collaboration";

const input = (over: Record<string, unknown>) =>
  CollabMessageInput.parse({ type: "notify", from: "billing", to: "technical", payload: {}, ...over });

describe("a collaboration message as sent", () => {
  it("waits by its type: a query and an escalation for their answer, others for their ttl", () => {
    expect(messageWaitS(input({ type: "query" }))).toBe(DEFAULT_QUERY_TIMEOUT_S);
    expect(messageWaitS(input({ type: "query", timeout_s: 5 }))).toBe(5);
    expect(messageWaitS(input({ type: "escalate", to: undefined }))).toBe(DEFAULT_ESCALATION_TIMEOUT_S);
    expect(messageWaitS(input({ ttl_s: 60 }))).toBe(60);
    expect(messageWaitS(input({}))).toBeUndefined();
  });

  it("is open, unnumbered until the log takes it, and expires when its wait ends", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    const message = newMessage(input({ type: "query", timeout_s: 10, subject: "why?" }), "col_1", "cmsg_1", now);
    expect(message).toMatchObject({
      id: "cmsg_1",
      seq: 0,
      collaboration_id: "col_1",
      status: "sent",
      subject: "why?",
      sent_at: "2026-01-01T00:00:00.000Z",
      expires_at: "2026-01-01T00:00:10.000Z",
    });
    expect(newMessage(input({}), "col_1", "cmsg_2", now).expires_at).toBeNull();
  });

  it("holds its sender: a query until answered, a blocking escalation until a person answers", () => {
    expect(senderWait(input({ type: "query", subject: "s" }))).toEqual({
      kind: "internal",
      to: "technical",
      reason: "s",
    });
    expect(senderWait(input({ type: "escalate", to: undefined }))).toEqual({
      kind: "user",
      to: "user",
      reason: "escalation",
    });
    expect(senderWait(input({ type: "escalate", to: undefined, payload: { blocking: false } }))).toBeNull();
    expect(senderWait(input({}))).toBeNull();
  });

  it("a broadcast asks for a capability match only when it names capabilities as strings", () => {
    expect(capabilityMatchOf({ capabilities: ["refunds"], exclude: ["sales", 3], min_score: 0.5 })).toEqual({
      capabilities: ["refunds"],
      options: { exclude: ["sales"], min_score: 0.5 },
    });
    expect(capabilityMatchOf({ capabilities: ["refunds"] })?.options).toEqual({ exclude: [], min_score: 0 });
    expect(capabilityMatchOf({ capabilities: [1] })).toBeNull();
    expect(capabilityMatchOf({})).toBeNull();
  });
});
