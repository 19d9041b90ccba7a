import { describe, expect, it } from "vitest";
import { eventLine } from "../../client/src/cli/render.ts";
import type { LiveEvent } from "../../client/src/index.ts";

/** How live events read in the chat and the tail (pure). */

const event = (type: string, data: unknown): LiveEvent =>
  ({ id: "evt_1", type, session_id: "ses_1", run_id: "run_1", at: "2026-11-26T10:00:00.000Z", data }) as LiveEvent;

const trace = (event_type: string, details: object, extra: object = {}) => ({
  event_id: "evt_1",
  event_type,
  timestamp: "2026-11-26T10:00:00.000Z",
  session_id: "ses_1",
  agent_name: "billing",
  correlation_id: "run_1",
  details,
  duration_ms: 3,
  error: null,
  ...extra,
});

describe("eventLine", () => {
  it("routing and handoffs as the chat shows them", () => {
    expect(
      eventLine(event("route", trace("route", { routing_method: "rule", routing_confidence: 100 })), "chat"),
    ).toEqual({
      text: "🎯 Routing via rule to billing (100%)",
      style: "cyan",
    });
    const handoff = trace("handoff", {
      from_agent: "billing",
      to_agent: "supervisor",
      handoff_reason: "refund over the limit",
      outcome: "completed",
    });
    expect(eventLine(event("handoff", handoff), "chat")?.text).toBe("↪ billing → supervisor: refund over the limit");
  });

  it("an event type this client does not know is shown by its name, not dropped", () => {
    expect(eventLine(event("message.edited", { delta: "Hel" }), "chat")).toEqual({
      text: "· message.edited",
      style: "dim",
    });
    expect(eventLine(event("collaboration_started", "col_1"), "tail")?.text).toBe("· collaboration_started col_1");
  });

  it("an answer cut short keeps its text and says it was cut", () => {
    const message = { id: "msg_1", role: "assistant", agent: "billing", type: "message", content: "Your refund" };
    expect(eventLine(event("message", message), "chat")).toEqual({ text: "billing: Your refund" });
    expect(eventLine(event("message", { ...message, cut: true }), "chat")).toEqual({
      text: "billing: Your refund ✂ cut",
      style: "yellow",
    });
  });

  it("chat leaves out the steps tail shows", () => {
    const started = event("agent_started", trace("agent_start", {}));
    expect(eventLine(started, "chat")).toBeNull();
    expect(eventLine(started, "tail")?.text).toBe("· billing started");
  });
});
