import { describe, expect, it } from "vitest";
import { acceptMessage, type CollaborationRecord, type MessageContext } from "../../src/collaboration/accept-message";
import { newMessage } from "../../src/collaboration/messages";
import { CollabMessageInput } from "../../src/schemas/collaboration";

const NOW = Date.parse("2026-11-29T12:00:00Z");
const record: CollaborationRecord = {
  id: "col_1",
  phase: "discovery",
  initiator: "billing",
  participants: ["billing", "technical"],
  context: {},
  proposal_id: null,
  terms: null,
  outcome: null,
  created_at: new Date(NOW - 1000).toISOString(),
  updated_at: new Date(NOW - 1000).toISOString(),
};
const input = (over: Record<string, unknown>) =>
  CollabMessageInput.parse({ type: "notify", from: "billing", to: "technical", payload: {}, ...over });
const ctx = (over: Partial<MessageContext> = {}): MessageContext => ({
  tenant: "t1",
  record,
  answered: null,
  proposals: () => new Map(),
  id: "cmsg_2",
  now: NOW,
  ...over,
});

describe("a message a collaboration accepts", () => {
  it("is refused with its code when the sender or addressee is not a participant, naming the field", () => {
    for (const [field, over] of [
      ["from", { from: "sales" }],
      ["to", { to: "sales" }],
    ] as const) {
      const refused = acceptMessage(input(over), ctx());
      expect(refused.ok).toBe(false);
      if (refused.ok) continue;
      expect(refused.error.code).toBe("VALIDATION_FAILED");
      expect(refused.error.details).toMatchObject({ issues: [{ path: field }], participants: record.participants });
    }
  });

  it("is refused when it replies to a message the collaboration does not hold, or the collaboration is complete", () => {
    const reply = acceptMessage(input({ type: "response", correlation_id: "cmsg_x" }), ctx());
    expect(!reply.ok && reply.error.code).toBe("VALIDATION_FAILED");
    const complete = acceptMessage(input({}), ctx({ record: { ...record, phase: "completion" } }));
    expect(!complete.ok && complete.error.code).toBe("INVALID_TRANSITION");
  });

  it("closes the open query it answers, and records the message sent", () => {
    const query = newMessage(input({ type: "query", from: "technical", to: "billing" }), "col_1", "cmsg_1", NOW - 500);
    const accepted = acceptMessage(input({ type: "response", correlation_id: "cmsg_1" }), ctx({ answered: query }));
    expect(accepted.ok).toBe(true);
    if (!accepted.ok) return;
    expect(accepted.value.closes?.id).toBe("cmsg_1");
    expect(accepted.value.message).toMatchObject({ id: "cmsg_2", type: "response", collaboration_id: "col_1" });
    expect(accepted.value.next.updated_at).toBe(new Date(NOW).toISOString());
    expect(accepted.value.records.map((r) => r.action)).toEqual(["collaboration.message_sent"]);
  });

  it("puts an escalation in the tenant's inbox as well", () => {
    const accepted = acceptMessage(input({ type: "escalate", to: undefined, subject: "need a human" }), ctx());
    expect(accepted.ok && accepted.value.records.map((r) => r.action)).toEqual([
      "collaboration.message_sent",
      "inbox.item_created",
    ]);
  });
});
