import { describe, expect, it } from "vitest";
import { SessionView } from "../../src/schemas/session";
import {
  end,
  isIdleExpired,
  messageActor,
  newSession,
  summarize,
  toHistoryItem,
  touch,
  toView,
} from "../../src/sessions/model";

const t0 = Date.UTC(2026, 2, 1, 12);
const session = newSession(
  { id: "ses_a", tenant: "alpha", agent: "support", metadata: { channel: "web" }, ttl_s: 60 },
  t0,
);

describe("session model", () => {
  it("starts with the agent alone on the stack and expires ttl after creation", () => {
    expect(session).toMatchObject({
      status: "active",
      current_agent: "support",
      handoff_stack: ["support"],
      state: {},
      expires_at: t0 + 60_000,
      ended_at: null,
    });
  });

  it("pushes the expiry on every touch", () => {
    const later = touch(session, t0 + 30_000);
    expect(later).toMatchObject({ updated_at: t0 + 30_000, expires_at: t0 + 90_000, created_at: t0 });
    expect(session.expires_at).toBe(t0 + 60_000);
  });

  it("is idle-expired exactly from its expiry on, and only while active", () => {
    expect(isIdleExpired(session, t0 + 59_999)).toBe(false);
    expect(isIdleExpired(session, t0 + 60_000)).toBe(true);
    expect(isIdleExpired(end(session, "deleted", t0), t0 + 120_000)).toBe(false);
  });

  it("renders a view the API schema accepts", () => {
    const view = toView(session, 2, { support: "busy" });
    expect(SessionView.parse(view)).toEqual(view);
    expect(view).toMatchObject({
      status: "active",
      history_length: 2,
      expires_at: new Date(t0 + 60_000).toISOString(),
    });
    expect(toView(end(session, "expired", t0), 0, {}).status).toBe("expired");
  });

  it("maps posted messages to history items: agent means assistant, the current agent by default", () => {
    expect(toHistoryItem({ role: "agent", content: "hi" }, "support", "m1", t0)).toEqual({
      id: "m1",
      role: "assistant",
      agent: "support",
      content: "hi",
      created_at: new Date(t0).toISOString(),
    });
    expect(toHistoryItem({ role: "assistant", agent: "billing", content: "x" }, "support", "m2", t0).agent).toBe(
      "billing",
    );
    expect(toHistoryItem({ role: "user", content: "q" }, "support", "m3", t0)).not.toHaveProperty("agent");
    expect(
      toHistoryItem({ role: "tool", content: "{}", type: "tool_output", tool_name: "lookup" }, "support", "m4", t0),
    ).toMatchObject({
      role: "tool",
      type: "tool_output",
      tool_name: "lookup",
    });
  });

  it("attributes an agent's message to the agent and a user's to the caller", () => {
    const caller = { actor: "api", actor_type: "user" as const };
    expect(messageActor(toHistoryItem({ role: "agent", content: "a" }, "support", "m", t0), caller)).toEqual({
      actor: "support",
      actor_type: "agent",
    });
    expect(messageActor(toHistoryItem({ role: "user", content: "u" }, "support", "m", t0), caller)).toEqual(caller);
  });

  it("summarizes an expired session without its state values", () => {
    const expired = end({ ...session, state: { card: "4111", tier: "gold" } }, "expired", t0 + 60_000);
    const summary = summarize(expired, 4, { support: "idle" });
    expect(summary).toMatchObject({
      tenant: "alpha",
      session_id: "ses_a",
      expired_at: new Date(t0 + 60_000).toISOString(),
      current_agent: "support",
      history_length: 4,
      handoff_count: 0,
      summary: { state_keys: ["card", "tier"], metadata: { channel: "web" }, agent_status: { support: "idle" } },
    });
    expect(JSON.stringify(summary)).not.toContain("4111");
  });
});
