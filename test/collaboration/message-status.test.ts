import { describe, expect, it } from "vitest";
import {
  closeMessage,
  deadlineAction,
  deadlineChange,
  INITIAL_MESSAGE_STATUS,
  isOpen,
  MESSAGE_TRANSITIONS,
  type MessageChange,
  unblocksSender,
} from "../../src/collaboration/message-status";
import { type CollabMessage, MESSAGE_STATUSES } from "../../src/schemas/collaboration";

const message = (over: Partial<CollabMessage> = {}): CollabMessage => ({
  id: "cmsg_1",
  collaboration_id: "col_1",
  seq: 1,
  type: "query",
  from: "billing",
  to: "technical",
  subject: null,
  payload: {},
  priority: "normal",
  correlation_id: null,
  status: INITIAL_MESSAGE_STATUS,
  sent_at: "2026-01-01T00:00:00.000Z",
  expires_at: null,
  answered_by: null,
  error: null,
  reply: null,
  resolved_by: null,
  ...over,
});

const CHANGES: Record<keyof (typeof MESSAGE_TRANSITIONS)["sent"], MessageChange> = {
  respond: { event: "respond", by: "cmsg_2" },
  cancel: { event: "cancel", by: "cmsg_3" },
  resolve: { event: "resolve", reply: "yes", by: "ops" },
  break_deadlock: { event: "break_deadlock", code: "DEADLOCK_RESOLVED" },
  time_out: { event: "time_out" },
  expire: { event: "expire" },
};

describe("collaboration message statuses", () => {
  it("the table covers every status, and only a sent message is open", () => {
    expect(Object.keys(MESSAGE_TRANSITIONS).sort()).toEqual([...MESSAGE_STATUSES].sort());
    for (const status of MESSAGE_STATUSES) expect(isOpen({ status })).toBe(status === "sent");
  });

  it("every event closes a sent message into the status the table names, with what the event leaves", () => {
    expect(closeMessage(message(), CHANGES.respond)).toMatchObject({
      status: "answered",
      answered_by: "cmsg_2",
      error: null,
    });
    expect(closeMessage(message(), CHANGES.cancel)).toMatchObject({
      status: "cancelled",
      answered_by: "cmsg_3",
      error: "cancelled",
    });
    expect(closeMessage(message({ type: "escalate" }), CHANGES.resolve)).toMatchObject({
      status: "answered",
      reply: "yes",
      resolved_by: "ops",
    });
    expect(closeMessage(message(), CHANGES.break_deadlock)).toMatchObject({
      status: "timed_out",
      error: "DEADLOCK_RESOLVED",
    });
    expect(closeMessage(message(), CHANGES.time_out)).toMatchObject({ status: "timed_out", error: "QUERY_TIMEOUT" });
    expect(closeMessage(message({ type: "escalate" }), CHANGES.time_out)).toMatchObject({
      status: "timed_out",
      error: "HUMAN_TIMEOUT",
    });
    expect(closeMessage(message({ type: "notify" }), CHANGES.expire)).toMatchObject({ status: "expired", error: null });
  });

  it("a closed message takes no event: every other cell is refused", () => {
    for (const status of MESSAGE_STATUSES.filter((s) => s !== "sent"))
      for (const change of Object.values(CHANGES)) expect(closeMessage(message({ status }), change)).toBeNull();
  });

  it("a deadline times out what someone waits on and drops the rest, each under its own audit action", () => {
    expect(deadlineChange({ type: "query" })).toEqual({ event: "time_out" });
    expect(deadlineChange({ type: "escalate" })).toEqual({ event: "time_out" });
    expect(deadlineChange({ type: "notify" })).toEqual({ event: "expire" });
    expect(deadlineAction({ type: "query" })).toBe("collaboration.query_timed_out");
    expect(deadlineAction({ type: "escalate" })).toBe("collaboration.escalation_timed_out");
    expect(deadlineAction({ type: "broadcast" })).toBe("collaboration.message_expired");
    expect(unblocksSender({ type: "query" })).toBe(true);
    expect(unblocksSender({ type: "notify" })).toBe(false);
  });
});
